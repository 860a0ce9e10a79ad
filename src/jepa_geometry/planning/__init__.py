"""Planning with a world model: the latent goal cost, swm's solvers and budget tiers
(:mod:`.solver`), and the paired goal-reaching protocol of LeWM and SCALE (:mod:`.protocol`)."""
