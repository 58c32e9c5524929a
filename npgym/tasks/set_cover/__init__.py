"""Set Cover (subset selection, minimise the number of subsets; some instances have no cover)."""

from npgym.tasks.set_cover.generator import SetCoverConfig
from npgym.tasks.set_cover.instance import SetCoverInstance
from npgym.tasks.set_cover.task import SetCoverTask

__all__ = ["SetCoverConfig", "SetCoverInstance", "SetCoverTask"]
