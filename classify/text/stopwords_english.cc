// The English stopword list shipped with autocat: function words (articles,
// pronouns, auxiliaries, prepositions, conjunctions, common adverbs and
// contractions). Words are already in NFKC_Casefold form, as the analyzer
// produces them; contractions use the ASCII apostrophe (the analyzer also
// matches the typographic one).
#include "classify/text/analyzer.h"

namespace autocat::internal {

const std::vector<std::string>& english_stopwords() {
  // clang-format off
  static const std::vector<std::string> kWords = {
      // Articles, determiners and quantifiers.
      "a", "an", "the", "this", "that", "these", "those", "all", "any", "both", "each", "either",
      "neither", "every", "few", "many", "much", "more", "most", "other", "others", "another",
      "some", "such", "no", "none", "own", "same", "several", "enough",
      // Personal, possessive and reflexive pronouns.
      "i", "me", "my", "myself", "we", "us", "our", "ours", "ourselves", "you", "your", "yours",
      "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
      "it", "its", "itself", "they", "them", "their", "theirs", "themselves",
      // Interrogatives and relatives.
      "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether",
      "whatever", "whoever", "whenever", "wherever",
      // Auxiliary and modal verbs.
      "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having",
      "do", "does", "did", "doing", "done", "can", "could", "may", "might", "must", "shall",
      "should", "will", "would", "ought",
      // Contractions.
      "i'm", "you're", "he's", "she's", "it's", "we're", "they're", "i've", "you've", "we've",
      "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll",
      "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't",
      "hadn't", "doesn't", "don't", "didn't", "won't", "wouldn't", "shan't", "shouldn't",
      "can't", "cannot", "couldn't", "mustn't", "mightn't", "needn't", "let's", "that's",
      "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's",
      // Prepositions.
      "about", "above", "across", "after", "against", "along", "among", "around", "at",
      "before", "behind", "below", "beneath", "beside", "besides", "between", "beyond", "by",
      "down", "during", "except", "for", "from", "in", "inside", "into", "near", "of", "off",
      "on", "onto", "out", "outside", "over", "per", "since", "through", "throughout", "till",
      "to", "toward", "towards", "under", "underneath", "until", "up", "upon", "via", "with",
      "within", "without",
      // Conjunctions.
      "and", "but", "or", "nor", "so", "yet", "if", "because", "as", "than", "while",
      "whereas", "although", "though", "unless", "whereby",
      // Adverbs and particles.
      "again", "also", "already", "always", "else", "ever", "further", "furthermore", "here",
      "hence", "however", "just", "less", "moreover", "never", "not", "now", "often", "once",
      "only", "perhaps", "quite", "rather", "really", "still", "then", "there", "thereby",
      "therefore", "thus", "too", "very", "instead", "otherwise", "etc",
  };
  // clang-format on
  return kWords;
}

}  // namespace autocat::internal
