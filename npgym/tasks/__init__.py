"""One package per task; each is registered in :mod:`npgym.registry`."""
