"""Task families built on the ten base tasks: composition, variants, aggregation, inversion."""
