"""Written by hand: ttgen must never overwrite it."""

HAND_WRITTEN = True
