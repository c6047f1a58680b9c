"""search, show, tokens: commands over a catalog file."""
