#!/usr/bin/python3
"""autocat from Python next to python3-xapian: index texts with their
categories, then search one category and count the categories of the matches.
usage: search_app.py MODEL_DIR DB_DIR   (MODEL_DIR from `autocat train`)"""
import sys

import autocat
import xapian

indexer = autocat.CategoryIndexer(sys.argv[1], decision="any-of", min_score=0.3)
db = xapian.WritableDatabase(sys.argv[2], xapian.DB_CREATE_OR_OVERWRITE)
texts = {"comet": "The new telescope photographed a comet passing close to Jupiter.",
         "derby": "The striker scored twice in the derby and the fans sang until the whistle.",
         "injury": "The team doctor checked the goalkeeper's knee after the match.",
         "risotto": "Stir the risotto slowly and add warm stock a ladle at a time."}
for doc_id, text in texts.items():
    print(doc_id, indexer.index_document(db, doc_id, text))
db.commit()

parser = xapian.QueryParser()
autocat.add_category_prefix(parser)
enquire = xapian.Enquire(db)
enquire.set_query(parser.parse_query("category:football"))
mset, facets = autocat.facet_counts(enquire)
print("category:football ->", [m.document.get_data().decode()[:30] for m in mset], facets)
