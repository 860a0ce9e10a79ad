"""Variance matching: a worked example of a loss term of your own (book chapter 10).

SIGReg asks every 1-D projection of the embedding to be distributed like N(0, 1), a
statement about all of its moments. This term asks less, and only per coordinate: the spread of
each coordinate of z over the batch's frames should reach 1, with a hinge on the standard
deviation (VICReg's variance term, Bardes et al. 2022):

    L_var = WEIGHT * mean_d max(0, 1 - sqrt(Var_batch(z_d) + EPS))

It pushes up collapsed coordinates and leaves spread ones alone, so the question it asks of
the two papers' measures is whether a second-moment floor on top of SIGReg changes where the
planner's cost puts its weight. Change WEIGHT (or anything else): the file's sha256 changes,
and so do the keys of its models, which are trained again.

The signature is the book's (src/jepa_geometry/wm/user_objective.py): ``z`` (B, T, D) the
embeddings of the batch's frames, ``z_hat`` (B, T-1, D) the predictions of ``z[:, 1:]``, ``q``
(B, T, q_dim) the task state of the frames, ``step`` the optimizer step. It returns a scalar
tensor and, optionally, a dict of scalars the training log records as ``objective.<name>``.
"""

import torch

WEIGHT = 0.1
EPS = 1e-4


def term(z: torch.Tensor, z_hat: torch.Tensor, q: torch.Tensor, step: int):
    std = torch.sqrt(z.reshape(-1, z.shape[-1]).var(dim=0) + EPS)
    loss = WEIGHT * torch.relu(1.0 - std).mean()
    return loss, {"min_std": std.min().detach(), "mean_std": std.mean().detach()}
