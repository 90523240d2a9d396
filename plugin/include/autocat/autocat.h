// autocat: automatic text categorization built into a Xapian index.
// Start here. An application includes this header only:
//   CategoryIndexer (category_indexer.h)  open a model, categorize text, enrich documents
//   configure_query_parser, category_filter, category_term, category_counts,
//   CategoryFacetSpy (facets.h)  search by category, facet counts (also remote)
//   correct_document, undo_correction, is_editor_set (corrections.h)  editors' labels
//   Options (options.h), Category and Method (types.h), errors (error.h)
#pragma once

#include "autocat/category_indexer.h"
#include "autocat/corrections.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "autocat/options.h"
#include "autocat/types.h"
