"""Which model plays a method's role when the eval binds only the suite's usual ``judge`` role.

Every LLM method of the suite but POIROT asks the role ``judge``; POIROT's personas ask the role
``persona``. A sweep that binds only ``--model-role judge=...`` would silently leave POIROT's
personas on the evaluated model, so :func:`role_model` falls back to ``judge`` when a method's own
role is unbound and ``judge`` is bound, and says so in a logger warning (shown in the eval log).
"""

from __future__ import annotations

import logging

from inspect_ai.model import Model, get_model, model_roles

logger = logging.getLogger(__name__)

JUDGE = "judge"


def role_model(role: str, method: str) -> Model:
    """The model bound to ``role``; else, when only ``judge`` is bound, the judge's model (with a
    warning naming ``method``); else the evaluated model."""
    roles = model_roles()
    if role not in roles and JUDGE in roles:
        logger.warning(
            f"{method}: no model bound to role '{role}', so its calls use the model of role '{JUDGE}' "
            f"(bind --model-role {role}=... to choose another)"
        )
        return get_model(role=JUDGE)
    return get_model(role=role)
