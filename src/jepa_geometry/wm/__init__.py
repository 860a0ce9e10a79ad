"""The world model (LeWM), the loss terms of the papers, the arms that combine them, training."""
