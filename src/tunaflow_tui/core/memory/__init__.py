"""Project memory engine: chunking, local embeddings, vector search, FTS queries, rank fusion.

Pure building blocks with no UI and no database schema of their own. Callers store vectors as
``bytes`` wherever they like (:mod:`.vectors`), search them with :class:`.vectors.VectorIndex`, build
FTS5 expressions with :mod:`.fts_query` and fuse rankings with :mod:`.fusion`.

Nothing is re-exported here on purpose: importing one module (say, the FTS query builder) must not
pull numpy or onnxruntime into a process that does not need them.
"""
