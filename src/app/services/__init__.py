"""Application services: they apply what the domain computes, through the ports."""
