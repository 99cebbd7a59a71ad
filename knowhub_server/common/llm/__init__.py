"""The model clients: the chat LLM, BM25 and dense embeddings, and the lane and retries
their calls go through."""
