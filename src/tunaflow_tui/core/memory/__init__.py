"""Project memory engine: chunking, local embeddings, vector search, FTS queries, rank fusion.

Pure building blocks with no UI and no database schema of their own:

- :mod:`.chunks` cuts messages into chunks of at most 800 characters, with offsets;
- :mod:`.model_files` and :mod:`.embedder` find, verify and run the local model (a worker
  thread only for loading and embedding);
- :mod:`.worker` runs that model, and a project's vector index, in a process of its own;
  :mod:`.worker_client` is its client (the embedder the app and the commands use) and
  :mod:`.worker_protocol` its wire format; :mod:`.embedding_port` is what callers need of either;
- :mod:`.vectors` stores vectors as ``bytes`` and searches them (:class:`.vectors.VectorIndex`);
- :mod:`.fts_query` and :mod:`.fts_search` turn natural-language questions into FTS5 queries and
  run them through a caller's function;
- :mod:`.fusion` and :mod:`.hybrid` fuse rankings; :mod:`.selection` picks the chunks of earlier
  roundtable rounds that a new round sees.

Callers keep vectors wherever they like, next to :data:`.model_files.MODEL_ID`. Nothing is
re-exported here on purpose: importing one module (say, the FTS query builder) must not pull
numpy or onnxruntime into a process that does not need them.
"""
