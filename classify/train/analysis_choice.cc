#include "classify/train/analysis_choice.h"

#include <algorithm>
#include <filesystem>

#include "classify/io/model_dir.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

// What the analyses of short texts compete on: svm's cross-validated
// objective. A linear model weighs every term a representation offers, so
// it sees what bigrams, stems or function words add, at a fraction of the
// cost of cross-validating every method (logreg's fits at large C, kNN's
// neighbour searches and combo's stacking); the analysis chosen is then
// cross-validated in full once.
double analysis_objective(const TunedSettings& tuned) {
  const std::vector<double>& objectives = tuned.method_objective;
  return objectives.empty() ? -1.0 : *std::max_element(objectives.begin(), objectives.end());
}

// A candidate must beat the given analysis by more than this: less is
// within cross-validation's noise at some thousands of documents, and not
// worth the bigger model.
constexpr double kMinAnalysisGain = 0.002;

std::string analysis_name(const AnalyzerSettings& settings) {
  std::string name = settings.stemmer == "none" ? "words" : "stems (" + settings.stemmer + ")";
  if (settings.ngrams > 1) name += settings.ngrams == 2 ? " and bigrams" : " and trigrams";
  if (settings.stopwords.empty()) name += ", stopwords kept";
  return name;
}

bool same_analysis(const AnalyzerSettings& a, const AnalyzerSettings& b) {
  return a.stemmer == b.stemmer && a.ngrams == b.ngrams && a.stopwords == b.stopwords;
}

// A collection cross-validated for the comparison: its objective, -1 if no
// document under this analysis is labelled, and the svm C chosen.
struct Compared {
  double objective = -1.0;
  double svm_c = 1.0;
};
Compared compare_corpus(const TrainingCorpus& corpus, const TrainOptions& options,
                        TrainReport* report, PhaseTracker* phases, const std::string& analysis) {
  if (corpus.categories.empty()) return {};
  const TunedSettings tuned = tune_settings(corpus, options, model_decision(corpus, options),
                                            phases->tune_progress(analysis), TuneScope::kSvm);
  if (!tuned.thresholds.empty()) ++report->cross_validations;
  return {analysis_objective(tuned), tuned.svm_c};
}

// The kept texts under `settings`, in memory, as a collection written and
// read back would hold them.
TrainingCorpus kept_corpus(const KeptTexts& kept, const AnalyzerSettings& settings) {
  const Analyzer analyzer(settings);
  TrainingCorpusBuilder builder;
  std::vector<Token> tokens;
  for (const KeptTexts::Text& text : kept.texts) {
    tokens.clear();
    analyzer.analyze(text.text, &tokens);
    if (!tokens.empty()) builder.add(text.id, tokens, text.labels);
  }
  return builder.build();
}

}  // namespace

// Cross-validates the kept texts under the given analysis and the
// candidates (see the header).
AnalysisChoice choose_analysis(const KeptTexts& kept, const AnalyzerSettings& given,
                               const TrainOptions& options, const std::string& training_db,
                               TrainReport* report, PhaseTracker* phases, HeldDocuments* held) {
  AnalysisChoice best{given, false};
  phases->begin("compare analyses", "fits", 0, analysis_name(given));
  // A sample, or the documents held back, are compared in memory; else the
  // whole collection is at training_db already.
  const Compared given_compared = compare_corpus(
      kept.sampled || held->holding ? kept_corpus(kept, given)
                                    : load_training_corpus(Xapian::Database(training_db)),
      options, report, phases, analysis_name(given));
  const double given_objective = given_compared.objective;
  double best_objective = given_objective;
  // The candidates are compared at the C the given analysis chose, not
  // each over svm's C grid, whose larger C fit slowest: that halves the
  // comparison, and on the Subject lines and one-sentence texts every
  // analysis kept its rank. A candidate wanting another C is judged a
  // little low, which favours the given analysis. The one chosen is then
  // cross-validated in full, C included.
  TrainOptions candidate_options = options;
  if (!candidate_options.svm_c) candidate_options.svm_c = given_compared.svm_c;
  report->analysis_svm_c = *candidate_options.svm_c;
  report->analysis_objective.emplace_back(analysis_name(given), given_objective);
  std::vector<AnalyzerSettings> candidates;
  for (const char* stemmer : {"none", "english"}) {
    for (int ngrams : {1, 2}) {
      AnalyzerSettings settings = given;
      settings.stemmer = stemmer;
      settings.ngrams = ngrams;
      if (!same_analysis(settings, given)) candidates.push_back(settings);
    }
  }
  // On some short texts the function words carry the class.
  if (!given.stopwords.empty()) {
    AnalyzerSettings settings = given;
    settings.stopwords.clear();
    candidates.push_back(settings);
  }
  for (const AnalyzerSettings& settings : candidates) {
    phases->begin("compare analyses", "fits", 0, analysis_name(settings));
    const double objective = compare_corpus(kept_corpus(kept, settings), candidate_options, report,
                                            phases, analysis_name(settings))
                                 .objective;
    report->analysis_objective.emplace_back(analysis_name(settings), objective);
    if (objective > best_objective && objective > given_objective + kMinAnalysisGain) {
      best = AnalysisChoice{settings, kept.sampled};
      best_objective = objective;
    }
  }
  const bool given_stays = same_analysis(best.settings, given);
  if (held->holding && (given_stays || !kept.sampled)) {
    // The documents held are all the collection's: written once, under the
    // analysis chosen (a sample's winner is written by the caller).
    TrainingCollectionWriter writer(training_db, options.commit_batch);
    write_held(held, Analyzer(best.settings), &writer);
    writer.commit();
  } else if (!kept.sampled && !given_stays) {
    // Every text was kept: the winner's collection is written from them.
    const std::string candidate_db =
        (fs::path(training_db).parent_path() / kCandidateDbName).string();
    const Analyzer analyzer(best.settings);
    {
      TrainingCollectionWriter writer(candidate_db, options.commit_batch);
      std::vector<Token> tokens;
      for (const KeptTexts::Text& text : kept.texts) {
        tokens.clear();
        analyzer.analyze(text.text, &tokens);
        if (!tokens.empty()) writer.add(text.id, tokens, text.labels);
      }
      writer.commit();
    }
    fs::remove_all(training_db);
    fs::rename(candidate_db, training_db);
  }
  phases->end();
  report->analysis_chosen = true;
  report->analysis_sample = kept.sampled ? kept.texts.size() : 0;
  return best;
}

}  // namespace autocat::internal
