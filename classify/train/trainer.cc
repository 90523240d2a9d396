#include "classify/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>

#include "autocat/error.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/training_db.h"
#include "classify/io/atomic_file.h"
#include "classify/io/filenames.h"
#include "classify/io/journal.h"
#include "classify/io/model_dir.h"
#include "classify/io/spill_file.h"
#include "classify/methods/knn.h"
#include "classify/methods/linear.h"
#include "classify/train/analysis_choice.h"
#include "classify/train/fit.h"
#include "classify/train/ingest.h"
#include "classify/train/kept_tuning.h"
#include "classify/train/model_size.h"
#include "classify/train/phase_tracker.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

// Runs after fit_model() on the loaded corpus and may refine the model (EM).
using RefineModel = std::function<void(const TrainingCorpus&, ModelState*)>;

// Fits every classifier from the collection the writer's new generation
// holds, writes the model file beside it and installs the generation.
// `tuned`: settings cross-validated already on this collection, if any.
void fit_and_install(ModelDirWriter* writer, const AnalyzerSettings& settings,
                     const TrainOptions& options, TrainReport* report, PhaseTracker* phases,
                     const RefineModel& refine = nullptr,
                     std::optional<SampleTuning> tuned = std::nullopt,
                     std::optional<TrainClock::time_point> deadline = std::nullopt) {
  const auto fit_start = TrainClock::now();
  const bool kept = tuned && tuned->kept;
  ModelState model;
  {
    const Xapian::Database db(writer->next().training_db);
    report->documents = db.get_doccount();
    // A large collection is cross-validated on a sample (see fit_model),
    // read and tuned before the whole corpus is loaded, so that the
    // cross-validation's memory and the corpus's are never needed at once.
    std::optional<SampleTuning> sample_tuning = std::move(tuned);
    if (!sample_tuning && options.tune_thresholds && options.tuning_sample > 0) {
      const auto max_docs = static_cast<uint32_t>(options.tuning_sample);
      std::vector<uint8_t> keep;
      Decision decision = Decision::kOneOf;
      uint32_t labels_documents = 0;  // the whole collection's, for kNN's cost
      {
        const TrainingCorpus labels = load_training_labels(db);
        labels_documents = labels.num_docs();
        if (labels.num_docs() > max_docs) {
          keep = tuning_sample(labels, max_docs, /*seed=*/1);
          decision = model_decision(labels, options);
        }
      }
      if (!keep.empty()) {
        const std::string sample_of =
            "a sample of " +
            std::to_string(std::count_if(keep.begin(), keep.end(), [](uint8_t k) { return k; })) +
            " documents";
        phases->begin("cross-validate", "fits", 0, sample_of);
        const TrainingCorpus sample = load_training_corpus(db, keep);
        sample_tuning =
            SampleTuning{tune_settings(sample, options, decision, phases->tune_progress(sample_of),
                                       TuneScope::kEveryMethod, labels_documents, deadline),
                         sample.num_docs()};
        if (!sample_tuning->settings.thresholds.empty()) ++report->cross_validations;
      }
      release_free_memory();
    }
    phases->begin("load collection");
    TrainingCorpus corpus = load_training_corpus(db);
    if (!sample_tuning && options.tune_thresholds) {
      // Cross-validation here rather than in fit_model(), as its own phase.
      phases->begin("cross-validate", "fits");
      sample_tuning =
          SampleTuning{tune_settings(corpus, options, model_decision(corpus, options),
                                     phases->tune_progress(), TuneScope::kEveryMethod, 0, deadline),
                       corpus.num_docs()};
      if (!sample_tuning->settings.thresholds.empty()) ++report->cross_validations;
    }
    if (sample_tuning && !sample_tuning->kept) {
      report->tune_runs = sample_tuning->settings.runs;
    }
    const std::string model_file = writer->next().model_file;
    {
      // Said, and the space checked, before the first byte of the model
      // is written.
      const ModelSizeEstimate size = estimate_model_size(
          corpus,
          knn_training_search(options) == KnnSearchMode::kTwoStep ? kKnnDefaultPruneLength : 0);
      report->expected_model_file_bytes = size.model_file;
      report->expected_knn_index_bytes = size.knn_index;
      check_free_space(fs::path(model_file).parent_path().string(), size);
      phases->begin("fit", "models", kNumModelParts);
      phases->note("expected model size " + format_bytes(size.total()) + ": model file " +
                   format_bytes(size.model_file) + ", kNN index " + format_bytes(size.knn_index));
    }
    uint64_t parts_written = 0;
    // Each method's part goes to the model file as soon as it is fitted and
    // its weights are dropped, keeping what the report reads: at a million
    // documents each part is 0.2 GB, and only one lives at a time.
    const auto write_and_drop = [&](const WritePart& write_part) {
      return [&write_part, &refine, &parts_written, phases](ModelPart part, ModelState* fitted) {
        // EM refits multinomial NB after the fits: written after it.
        if (refine && part == ModelPart::kMultinomialNb) return;
        write_part(part, *fitted);
        drop_part_weights(part, fitted);
        // Else the next part's sums and rows are laid beside the freed
        // ones, and the resident memory climbs part after part.
        release_free_memory();
        phases->advance(++parts_written, kNumModelParts, model_part_name(part));
      };
    };
    std::vector<float> idf;  // the model's; the linear fits' and kNN's
    write_model_file_as_fitted(model_file, [&](const WritePart& write_part) -> const ModelState& {
      model = fit_model(corpus, settings, options, /*fit_linear=*/false, write_and_drop(write_part),
                        sample_tuning ? &*sample_tuning : nullptr);
      if (refine) {
        refine(corpus, &model);
        write_part(ModelPart::kMultinomialNb, model);
        drop_part_weights(ModelPart::kMultinomialNb, &model);
        phases->advance(++parts_written, kNumModelParts, "nb (EM)");
      }
      release_free_memory();
      // The linear methods fit on a document-major copy of the postings:
      // the corpus's own wait on disk meanwhile, and so do each category's
      // weights until the model's rows are packed from them.
      idf = compute_idf(model.df, model.num_docs, model.selected);
      // The corpus's term strings are the model's (fit_model copied them):
      // dropped, as nothing else reads them. The model's wait on disk while
      // the linear methods fit: only the model file's last section, written
      // after the fits, needs them.
      std::vector<std::string>().swap(corpus.terms);
      const std::string spill_dir = fs::path(model_file).parent_path().string();
      SpilledStrings spilled_terms(&model.terms, spill_dir, kTermsSpillFilePrefix,
                                   "the model's terms'");
      SpilledPostings spilled(&corpus, spill_dir);
      {
        const LinearProblem problem = make_linear_problem(
            corpus.num_docs(), idf,
            [&](const TermPostingsVisitor& visit) { spilled.for_each_term_postings(visit); });
        // The cross-validation's duals, if it ran on these documents.
        const bool same_documents =
            sample_tuning && !sample_tuning->kept && sample_tuning->documents == corpus.num_docs();
        fit_linear_models(problem, corpus, &model, write_and_drop(write_part),
                          same_documents ? &sample_tuning->settings.linear_duals : nullptr,
                          /*packed=*/true, spill_dir);
      }
      spilled_terms.restore();
      spilled.restore();
      crash_point("fitted");  // the model file not in place yet
      return model;
    });
    report->fit_seconds = elapsed_seconds(fit_start);
    crash_point("model-written");
    phases->begin("write");
    report->nb_alpha = {model.multinomial_nb.alpha, model.bernoulli_nb.alpha,
                        model.complement_nb.alpha};
    report->nb_tfidf = {model.multinomial_nb.tfidf(), model.bernoulli_nb.tfidf(),
                        model.complement_nb.tfidf()};
    report->svm_c = model.svm.c;
    report->logreg_c = model.logreg.c;
    // kNN's postings as classification reads them, so that loading the
    // model maps them instead of rebuilding them; written as they are
    // computed, never held in memory beside the corpus.
    // With the two-step arrays when the model searches in two steps.
    write_knn_index(corpus, model.knn_weights(idf), model.knn_tf, writer->next().knn_index,
                    model.knn_search == KnnSearchMode::kTwoStep ? kKnnDefaultPruneLength : 0);
  }
  {
    std::error_code ec;
    const uint64_t model_bytes = fs::file_size(writer->next().model_file, ec);
    report->model_file_bytes = ec ? 0 : model_bytes;
    const uint64_t knn_bytes = fs::file_size(writer->next().knn_index, ec);
    report->knn_index_bytes = ec ? 0 : knn_bytes;
  }
  writer->install();
  phases->end();

  report->categories = static_cast<uint32_t>(model.categories.size());
  report->default_method = model.training.default_method;
  report->decision = model.decision;
  report->knn_k = model.knn_k;
  report->ngrams = model.analyzer.ngrams;
  report->stemmer = model.analyzer.stemmer;
  report->default_method_chosen =
      model.training.choose_default_method && !model.method_objective.empty() &&
      *std::max_element(model.method_objective.begin(), model.method_objective.end()) >= 0;
  report->method_objective = model.method_objective;
  report->nb_alpha_objective = model.nb_alpha_objective;
  report->knn_similarity_power = model.knn_similarity_power;
  report->knn_concentration = model.knn_concentration;
  report->knn_tf = model.knn_tf;
  report->knn_search = model.knn_search;
  report->rocchio_gamma = model.rocchio_gamma;
  report->tuned = !model.thresholds.empty();
  report->settings_kept = kept;
  report->tuned_on_documents = report->tuned ? model.tuned_on_documents : 0;
  report->tuned_on_sample = report->tuned && !kept && model.tuned_on_documents < model.num_docs;
  report->tuned_copied_documents = report->tuned ? model.tuned_copied_documents : 0;
  report->tuned_pruned_candidates = report->tuned ? model.tuned_pruned_candidates : 0;
  if (report->tuned && !kept) {
    report->rare_cut_ratio = model.rare_cut_ratio;
    report->rare_cut_variant = model.rare_cut_variant;
    report->rare_categories = static_cast<uint32_t>(std::count_if(
        model.category_doc_counts.begin(), model.category_doc_counts.end(), is_rare_category));
  }
  report->knn_postings_per_token = model.knn_postings_per_token;
  report->knn_keeps_up = model.knn_keeps_up;
  report->knn_cost_limit = model.training.knn_cost_limit;
  report->threshold_folds = std::max(model.training.threshold_folds, 2);
  report->methods = options.methods;
  report->time_budget = options.time_budget;
  report->knn_objective = model.knn_objective;
  report->rocchio_gamma_objective = model.rocchio_gamma_objective;
  report->never_assigned.assign(model.thresholds.size(), {});
  for (size_t method = 0; method < model.thresholds.size(); ++method) {
    for (size_t c = 0; c < model.thresholds[method].size(); ++c) {
      if (model.thresholds[method][c] >= kNeverAssign) {
        const uint32_t documents =
            c < model.category_doc_counts.size() ? model.category_doc_counts[c] : 0;
        report->never_assigned[method].push_back(
            {model.categories[c], documents, documents < kMinPositives});
      }
    }
  }
  report->terms = static_cast<uint32_t>(model.terms.size());
  report->selected_terms = report->terms;
  if (!model.selected.empty()) {
    report->selected_terms = 0;
    for (uint8_t flag : model.selected) report->selected_terms += flag ? 1 : 0;
  }
}

}  // namespace

TrainReport train_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                        const TrainOptions& options, const ReadOptions& read_options,
                        const WarningCallback& on_warning, const UnlabelledInputs& unlabelled,
                        const TrainProgressCallback& on_progress) {
  check_train_settings(options);
  const auto start = TrainClock::now();
  TrainReport report;
  PhaseTracker phases(on_progress, &report);
  const AnalyzerSettings settings = resolve_analyzer_options(options.analyzer);
  const Analyzer analyzer(settings);

  // The new model is built in a generation of its own and installed only
  // once training has succeeded, so a failed or killed run leaves the old
  // model working.
  ModelDirWriter model_writer(model_dir, on_warning);
  if (model_writer.has_model() && on_warning) {
    std::error_code ec;
    const auto journal_bytes = fs::file_size(model_writer.current().journal, ec);
    if (!ec && journal_bytes > kJournalHeaderBytes) {
      on_warning(model_writer.current().journal +
                 ": documents learned or forgotten on the replaced model are not in the new "
                 "one (train --add keeps them)");
    }
  }
  uint64_t labelled = 0;
  // Short texts may take another analysis (choose_short_text_analysis):
  // their texts are kept to analyze them again.
  // Not under a time budget: the comparison is several cross-validations.
  const bool may_choose_analysis = options.choose_short_text_analysis && options.tune_thresholds &&
                                   options.time_budget <= 0 && settings.ngrams == 1 &&
                                   settings.stemmer == "none";
  KeptTexts kept;
  // Cross-validation of every document (tuning_sample 0) compares analyses
  // up to the default sample's size.
  kept.max_documents = static_cast<size_t>(
      options.tuning_sample > 0 ? options.tuning_sample : TrainOptions().tuning_sample);
  // A sample's winner is read again from the inputs: standard input cannot be.
  const bool read_twice =
      std::none_of(inputs.begin(), inputs.end(), [](const std::string& in) { return in == "-"; });
  // Documents that may take another analysis are held back rather than
  // written under the given one first.
  HeldDocuments held;
  held.holding = may_choose_analysis;
  bool short_texts = false, compare_analyses = false;
  {
    phases.begin("read", "documents");
    TrainingCollectionWriter writer(model_writer.next().training_db, options.commit_batch);
    labelled =
        add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer, &report,
                      on_warning, &phases, may_choose_analysis ? &kept : nullptr, &held);
    short_texts = may_choose_analysis && kept.written >= kMinShortTextDocuments &&
                  kept.mean_tokens() <= kShortTextMeanTokens;
    compare_analyses = short_texts && (kept.complete || (kept.sampled && read_twice));
    if (held.holding && !compare_analyses) {
      write_held(&held, analyzer, &writer);
      writer.commit();
    }
  }
  phases.end();
  crash_point("collection-written");
  report.mean_tokens = kept.mean_tokens();
  report.analyze_seconds = elapsed_seconds(start);
  if (labelled == 0) {
    throw InvalidArgumentError(
        "no labelled document with text in the input; JSON Lines records need a non-empty "
        "\"labels\" array, folder trees need one subfolder per category");
  }
  // The model's analysis: the given one, or the one short texts chose.
  AnalyzerSettings model_settings = settings;
  double choice_seconds = 0;
  if (short_texts && kept.sampled && !read_twice) {
    report.analysis_not_compared =
        "more than --tuning-sample documents from standard input, which cannot be read again "
        "under another analysis";
  } else if (short_texts && !kept.complete && !kept.sampled) {
    report.analysis_not_compared = "the texts are too large to keep for the comparison";
  }
  if (compare_analyses) {
    const auto choice_start = TrainClock::now();
    AnalysisChoice choice = choose_analysis(
        kept, settings, options, model_writer.next().training_db, &report, &phases, &held);
    model_settings = choice.settings;
    if (choice.read_again) {
      // Chosen on a sample: the whole collection under the analysis chosen,
      // from the documents held or else read again.
      std::vector<KeptTexts::Text>().swap(kept.texts);
      const std::string& training_db = model_writer.next().training_db;
      fs::remove_all(training_db);
      report.added = report.skipped_empty = 0;
      TrainingCollectionWriter writer(training_db, options.commit_batch);
      if (held.holding) {
        const uint64_t documents = held.documents.size();
        phases.begin("write collection", "documents", documents, "analyzed as chosen");
        write_held(&held, Analyzer(model_settings), &writer, &report, on_warning);
        writer.commit();
        phases.advance(documents);
      } else {
        report.skipped_unlabelled = 0;
        phases.begin("read", "documents", 0, "again, analyzed as chosen");
        add_documents(inputs, read_options, Analyzer(model_settings), options.keep_unlabelled,
                      &writer, &report, on_warning, &phases);
      }
      phases.end();
    }
    choice_seconds = elapsed_seconds(choice_start);
  }
  std::vector<KeptTexts::Text>().swap(kept.texts);
  RefineModel run_em;
  if (!unlabelled.empty()) {
    // EM's unlabelled documents are analyzed as the model's.
    run_em = [&](const TrainingCorpus& corpus, ModelState* model) {
      const Analyzer model_analyzer(model_settings);
      fit_unlabelled(unlabelled, read_options, model_analyzer, corpus, model, &report, on_warning);
    };
  }
  std::optional<TrainClock::time_point> deadline;
  if (options.time_budget > 0) {
    deadline = start + std::chrono::duration_cast<TrainClock::duration>(
                           std::chrono::duration<double>(options.time_budget));
  }
  fit_and_install(&model_writer, model_settings, options, &report, &phases, run_em, std::nullopt,
                  deadline);
  report.fit_seconds += choice_seconds;  // the comparison is fitting too
  report.total_seconds = elapsed_seconds(start);
  return report;
}

TrainReport add_to_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                         const ReadOptions& read_options, const WarningCallback& on_warning,
                         const TrainProgressCallback& on_progress, bool retune) {
  const auto start = TrainClock::now();
  TrainReport report;
  PhaseTracker phases(on_progress, &report);
  const std::string no_model = model_dir +
                               ": no model here to add to; train one with: autocat train "
                               "--model " +
                               model_dir + " INPUT...";
  // Checked before the writer creates anything: --add never makes a directory.
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) throw NotFoundError(no_model);
  const ModelPaths installed = resolve_model_dir(model_dir);
  if (!fs::is_regular_file(installed.model_file, ec)) {
    throw NotFoundError(missing_model_reason(model_dir) +
                        "; train --add needs an installed model to add to");
  }
  if (!fs::is_directory(installed.training_db, ec)) {
    throw NotFoundError(installed.training_db +
                        " is missing: train --add adds to the model's training collection; "
                        "train again from all the inputs with autocat train --model " +
                        model_dir + " INPUT...");
  }
  ModelDirWriter model_writer(model_dir, on_warning);
  if (!model_writer.has_model()) throw NotFoundError(no_model);
  // Settings come from the model, so new documents are analyzed and the
  // classifiers fitted exactly as before. Only its core is read at once
  // (every method is fitted again), and the parts one at a time for the
  // settings kept: at a million documents, seconds and a gigabyte less.
  ModelState old_model;
  const ModelFile old_file(model_writer.current().model_file, &old_model);
  TrainOptions options = old_model.training;
  // A refit tunes and searches as the model it replaces.
  if (!options.knn_search) options.knn_search = old_model.knn_search;
  const Analyzer analyzer(old_model.analyzer);
  // Read once before copying, so a damaged collection is named as such
  // instead of failing later with Xapian's bare "EOF reading block 2".
  phases.begin("copy collection");
  read_training_corpus(model_writer.current().training_db, model_dir);

  // Add to a copy in the new generation, so a failed run leaves the model
  // as it was.
  const fs::path new_db = model_writer.next().training_db;
  // Named file by file, with the OS's reason: a full disk says so.
  copy_directory(model_writer.current().training_db, new_db.string());
  // Xapian's lock file is no part of the data.
  fs::remove(new_db / "flintlock", ec);

  // What was learned and forgotten on the open model since it was trained.
  const JournalContents journal = read_journal(model_writer.current().journal);
  if (!journal.torn.empty() && on_warning) on_warning(journal.torn);

  {
    phases.begin("fold journal", "documents", journal.records.size());
    TrainingCollectionWriter writer(new_db.string(), options.commit_batch, /*overwrite=*/false);
    std::vector<std::string> terms;
    std::vector<uint32_t> counts;
    for (const JournalRecord& record : journal.records) {
      phases.advance(report.journal_learned + report.journal_forgotten + 1);
      if (record.kind == JournalRecord::Kind::kForget) {
        writer.remove(record.id);
        ++report.journal_forgotten;
        continue;
      }
      // Added as counts: a record may say a term occurs up to 2^32 - 1
      // times, which one token per occurrence would not fit in memory.
      terms.clear();
      counts.clear();
      for (const JournalTerm& term : record.terms) {
        terms.push_back(term.term);
        counts.push_back(term.count);
      }
      writer.add(record.id, terms, counts, record.labels);
      ++report.journal_learned;
    }
    if (!inputs.empty() || !read_options.databases.empty()) {
      phases.begin("read", "documents");
      add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer, &report,
                    on_warning, &phases);
    }
    writer.commit();
  }
  phases.end();
  crash_point("collection-written");
  report.analyze_seconds = elapsed_seconds(start);
  if (report.added == 0 && journal.records.empty()) {
    throw InvalidArgumentError(
        inputs.empty() && read_options.databases.empty()
            ? "nothing to refit: no INPUT given and no document learned or forgotten since " +
                  model_dir + " was trained; it is unchanged"
            : "no document with text to add; " + model_dir + " is unchanged");
  }
  // Cross-validation is most of a training's time, and a few more
  // documents hardly move what it chose: keep its choices unless asked.
  std::optional<SampleTuning> kept;
  if (!retune) {
    phases.begin("keep settings");
    kept = kept_tuning(old_file, &old_model, new_db.string(), &report.retune_reason);
  }
  fit_and_install(&model_writer, old_model.analyzer, options, &report, &phases, nullptr,
                  std::move(kept));
  report.total_seconds = elapsed_seconds(start);
  return report;
}

}  // namespace autocat::internal
