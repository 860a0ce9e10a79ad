"""One task's study: which arms, protocols and seeds it runs, the decisions that fix how, its
arms x seeds x planning cells, and building it; across the tasks, the studies read back from
the cache. One module each:

* :mod:`.spec` with ``specs/<task>.yaml``: one study specification per task, the one the task's
  chapters share (arms, protocols, seeds, the rung of its ladder);
* :mod:`.levers`: the levers of a task's gate and the manipulation tasks' ladders of them;
* :mod:`.decisions`: the decisions written down before their results were seen (SIGReg's strength,
  the ΛReg variant, the protocol gate and its ladder);
* :mod:`.cells`: a study's cells (train every arm, plan every solver cell, the MPPI
  temperature, success and paired tables with their intervals);
* :mod:`.build`: a study built into the cache many jobs at once;
* :mod:`.job_calls`: what a job runs, the calls a process pool or submitit hands to another
  process;
* :mod:`.diagnostics`: the models' logged embedding diagnostics, read from their training logs;
* :mod:`.regression` with ``previous_builds.yaml``: a new build against the results of the last
  one, after a change of protocol;
* :mod:`.load`: every task's study read from the cache (never built), for the cross-task
  verdict and page.

The verdict on a study's claims is in :mod:`jepa_geometry.verdict`, what its pages show in
:mod:`jepa_geometry.book.tables`.
"""
