"""Rules of the client chapters (roots, sampling, elicitation); no trio here."""
