"""Planning with a world model: the latent goal cost, swm's solvers and budget tiers
(:mod:`.solver`), the paired goal-reaching protocols of LeWM and SCALE and their episode sets,
hard subsets included (:mod:`.protocol`), planning a cell, the random floor and cached results
(:mod:`.evaluator`), and the simulator as the model: what a perfect model would reach
(:mod:`.ceiling`)."""
