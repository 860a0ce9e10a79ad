"""One task's study: the grid of arms x seeds x planning cells (:mod:`.grid`), the tables the
chapters show (:mod:`.tables`), the claims and their verdicts (:mod:`.verdict`), and the papers'
reported numbers (:mod:`.reference`); across the tasks, both papers' headline tables and the
book's verdict read from the cached studies (:mod:`.across`)."""
