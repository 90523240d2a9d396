// autocat: automatic text categorization built into a Xapian index.
// Start here. An application includes this header only:
//   CategoryIndexer (category_indexer.h)  open a model, categorize text, enrich documents
//   category_filter, add_category_prefix, CategoryFacetSpy (facets.h)  search by category
//   Options (options.h), Category and Method (types.h), errors (error.h)
#pragma once

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "autocat/options.h"
#include "autocat/types.h"
