"""The papers' theory: metric leverage (:mod:`.leverage`, SCALE), isotropy and the inverse
covariance in the linear-Gaussian model (:mod:`.linear_gaussian`, AnisoWM), and the 2-D
prediction-versus-planning toy (:mod:`.toy2d`, AnisoWM Figure 1)."""
