"""Fixed orders where a tuning library walks a set of hashed values, so a seed gives one trace in every process.

Python randomises the hash of strings per process (``PYTHONHASHSEED``), so
iterating over a ``set`` of strings, or of objects hashed by their string
form, visits them in an order that differs between processes. Two libraries
do that on a path that drives their search; both are given the same set in a
fixed order, nothing else changes:

- SMAC3 (2.4): the local search of its acquisition maximizer starts from
  ``list(set(configurations))``, and a ``Configuration`` hashes as its
  ``repr``. ``smac_maximizer`` returns the facade's own maximizer whose local
  search sorts those start points by their vector form.
- Kernel Tuner (1.5): ``Searchspace.get_param_neighbors`` collects the
  neighbouring values of one parameter in a set before shuffling them, so
  string values reach the shuffle in a per-process order.
  ``kernel_tuner_searchspace`` returns a ``Searchspace`` subclass that
  orders them as the parameter lists them, then shuffles as Kernel Tuner does.

The libraries are imported only when these functions are called.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bat.core.errors import TunerError


@cache
def _ordered_local_search() -> type:
    from smac.acquisition.maximizer.local_search import LocalSearch

    class OrderedLocalSearch(LocalSearch):
        """SMAC's local search, started from its start points sorted by their vector form."""

        def _get_init_points_from_previous_configs(self, *args: Any, **kwargs: Any) -> list:
            points = super()._get_init_points_from_previous_configs(*args, **kwargs)
            return sorted(points, key=lambda config: tuple(config.get_array().tolist()))

    return OrderedLocalSearch


def smac_maximizer(facade: Any, scenario: Any) -> Any:
    """The acquisition maximizer ``facade`` builds for ``scenario``, its local search in a fixed order."""
    from smac.acquisition.maximizer.local_search import LocalSearch

    maximizer = facade.get_acquisition_maximizer(scenario)
    local = getattr(maximizer, "_local_search", None)
    if type(local) is not LocalSearch:
        raise TunerError(f"SMAC's {type(maximizer).__name__} no longer holds a LocalSearch in _local_search; "
                         "tuner_adapters/hash_order.py needs updating for this SMAC version")
    local.__class__ = _ordered_local_search()
    return maximizer


@cache
def kernel_tuner_searchspace() -> type:
    """Kernel Tuner's ``Searchspace`` with a parameter's neighbouring values in the parameter's own order."""
    import random

    from kernel_tuner.searchspace import Searchspace

    class OrderedSearchspace(Searchspace):
        def get_param_neighbors(self, param_config: tuple, index: int, neighbor_method: str,
                                randomize: bool) -> list:
            original = param_config[index]
            found = {n[index] for n in self.get_neighbors(param_config, neighbor_method) if n[index] != original}
            values = [v for v in list(self.tune_params.values())[index] if v in found]
            if randomize:
                random.shuffle(values)  # the global generator Kernel Tuner shuffles with (seeded by the adapter)
            return values

    return OrderedSearchspace
