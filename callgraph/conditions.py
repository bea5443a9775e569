"""What an unknown answer's registry blockers would need: the keys whose class reaches the target.

A registry factory no key decided (`AutoModel.from_config(config.text_config)` without
--model-config) is unknown, never a dead end: for each such site among the blockers, the keys
of its table whose class reaches the target are listed, so the answer reads "reached if
text_config.model_type is one of: llama". A key is checked only if its class's module (or
package) mentions the target's class by name, or is where it is defined (a cheap filter over
the texts already read: a table has hundreds of keys); each is then explored from its class's
`forward`, within MAX_CONDITION_SECONDS in all (shared by the sites), the keys of the target's
own module first.
Those found are proven (a path exists); a key
the filter or the budget left out is not claimed either way (`complete` says whether the budget
cut the check).
"""
from __future__ import annotations

import time

from .model import Condition
from .semantics.binding import self_context
from .semantics.registry import UNDECIDED
from .values import VInst

MAX_CONDITION_SECONDS = 10.0  # all the sites' candidate explorations of one answer together


def conditions(explorer, blockers, target_func: str, target_class: str | None,
               deadline: float | None = None) -> tuple[Condition, ...]:
    ev, project = explorer.ev, explorer.p
    undecided = ev.registries.undecided
    sites = []
    for u in blockers:
        if u.why.startswith(UNDECIDED):
            where = u.why[len(UNDECIDED):].split(": ", 1)[0]
            if where in undecided and where not in sites:
                sites.append(where)
    if not sites:
        return ()
    mentions = {p for p, text in project.texts() if target_class and target_class in text}
    out = []
    for where in sites:  # each site its share of the budget
        stop = time.perf_counter() + MAX_CONDITION_SECONDS / len(sites)
        if deadline is not None:
            stop = min(stop, deadline)
        site, adapter = undecided[where]
        reaching, complete = [], True
        home = target_func.rsplit(".", 2)[0]  # the target's module: its own keys first
        keyed = [(k, adapter.module_of_key(site, k)) for k in adapter.keys(site)]
        keyed.sort(key=lambda km: not (km[1] and (home == km[1] or home.startswith(km[1] + "."))))
        for key, module in keyed:
            if module is None or not _mentions(project, module, mentions):
                continue
            if time.perf_counter() > stop:
                complete = False
                break
            for qual in adapter.candidates(site, key):
                if _reaches(explorer, qual, target_func, stop):
                    reaching.append(key)
                    break
        out.append(Condition(where, site.factory, site.key_expr, tuple(reaching), complete))
    return tuple(out)


def _mentions(project, module: str, mentions: set) -> bool:
    loc = project.locate(module)
    if loc is None:
        return False
    path, is_pkg = loc
    return any(p.parent == path.parent for p in mentions) if is_pkg else path in mentions


def _reaches(explorer, qual: str, target_func: str, stop: float) -> bool:
    found = explorer.ev.classes.method(qual, "forward")
    if found is None:
        return False
    fn = found[0]
    if fn.qual == target_func:
        return True
    ex = explorer.run(self_context(fn, VInst(qual)), lambda q: q == target_func, stop_at_first=True, deadline=stop)
    return ex.reached is not None
