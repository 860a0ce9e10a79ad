"""Measurements of trained embeddings: probes and PCA (:mod:`.probes`), rank channels
(:mod:`.ranking`), cost landscapes (:mod:`.landscape`), and all of them per model
(:mod:`.measurements`)."""
