"""Does this book's run reproduce what the papers report? The rule, the papers' numbers, every
claim the book tests and their evaluation, one module each:

* :mod:`.rule`: the verdict rule (labels, the smallest effects that matter, the claim and
  its evidence, Holm's families, the verdict table) and the evidence builders;
* :mod:`.preconditions`: what the claims assume of the trained models, measured;
* :mod:`.reference`: the papers' reported numbers (``reference_numbers.yaml``), one tidy table;
* :mod:`.claims`: the claim records' schema and their evaluation on a task's measurements (one
  evaluator per kind of evidence; the claims about the tasks together and about every task);
* :mod:`.records`: every claim record, the one registry (:func:`.records.claim_records`);
* :mod:`.kappa_claims`: AnisoWM's κ claims judged on its κ sweep's results;
* :mod:`.across`: the claims read across the task studies (the book's verdict, the cross-lens
  questions, the preconditions per task).
"""
