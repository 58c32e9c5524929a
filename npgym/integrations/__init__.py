"""Plumbing into RL trainers: :mod:`npgym.integrations.trl` and :mod:`npgym.integrations.verl`."""
