"""The book: executing chapters with papermill (:mod:`.pipeline`, :mod:`.papermill_io`) and the
figure style (:mod:`.plots`)."""
