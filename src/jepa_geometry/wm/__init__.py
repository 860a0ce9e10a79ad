"""The world model (LeWM), the loss terms of the papers, the arms that combine them, training.

* :mod:`.model`: LeWM (encoder, projector, AdaLN-zero predictor);
* :mod:`.losses`: ``sigreg``, ``LambdaReg``, ``scale_loss``, ``sample_pairs``, ``AuxHead``;
* :mod:`.arms`: lewm, scale, aux, anisowm and their sums, with the papers' weights;
* :mod:`.objective`: an arm's loss and its embedding diagnostics;
* :mod:`.user_objective`: a loss term of yours, read from a file;
* :mod:`.training`: the loop (resumable, deterministic, cached);
* :mod:`.flops`: a training step's FLOPs, the scaling study's compute axis;
* :mod:`.checkpoint`: resume files and model files, verified;
* :mod:`.dino`, :mod:`.dinowm`, :mod:`.selfdistill`: DINO-WM (the DINOv2 ViT-S/14 loader, the
  patch-token world model, the offline stand-in encoder; ``--arm dinowm`` trains and plans, the
  profile's ``dinowm`` section sizes it; the Two-Room and Push-T studies include it).
"""
