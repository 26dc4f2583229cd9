"""The model list: what VS Code's model picker shows of each agent (`lm/provideInformation`; docs/DESIGN.md,
"Wire protocol"). Built from the agent catalog alone, so it is answered before the actors are loaded
(`symposium/vscodelm.py`).
"""

from __future__ import annotations

from typing import Any

from actors.shared.version import version
from actors.store.catalog import AgentCatalog
from protocol.acp import agent_options, model_configuration
from protocol.acp.agent_text import shown
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import SIGN_IN_NOTE, Capabilities, InfoParams, ModelInfo, agent_detail, agent_tooltip

ELIZA_MODEL_ID = "symposium-eliza"
FAMILY = "symposium"
CONTEXT_TOKENS = 200_000


def _model(
    id: str,
    name: str,
    detail: str,
    *,
    context: int | None = None,
    ratio: float | None = None,
    tooltip: str | None = None,
    images: bool | None = None,
    schema: dict[str, Any] | None = None,
) -> ModelInfo:
    return ModelInfo(
        id=id,
        name=name,
        family=FAMILY,
        version=version(),
        max_input_tokens=context or CONTEXT_TOKENS,
        max_output_tokens=CONTEXT_TOKENS,
        capabilities=Capabilities(tool_calling=True, image_input=agent_options.takes_images(images)),
        detail=detail,
        tooltip=tooltip,
        bytes_per_token=round(ratio, 4) if ratio is not None else None,
        configuration_schema=schema,
    )


def model_infos(params: InfoParams, catalog: AgentCatalog | None = None) -> list[ModelInfo]:
    """The built-in Eliza, then per configured agent its own entry and, once one of its sessions
    offered them, one entry per model it offers (`<id>/<model value>`), with the context window
    it reported and the bytes per token its usage showed. Images are let through unless its
    sessions said its prompts do not take them (`agent_options.takes_images`)."""
    models = [_model(ELIZA_MODEL_ID, "Eliza (Symposium)", "built-in ACP agent", images=False)]
    for entry in params.agents:
        if entry.id == ELIZA_MODEL_ID:
            continue
        # A name from the settings may have come from a catalogue read before its names were cleaned.
        name = shown(entry.name) or entry.id
        if catalog is None:
            models.append(_model(entry.id, f"{name} (ACP)", "ACP agent"))
            continue
        key = agent_key(entry.agent)
        learned = catalog.get(key)
        ratio = learned.bytes_per_token
        images = learned.images
        settings = dict(entry.options.items)
        schema = model_configuration.configuration_schema(learned.choices, settings)
        detail, tooltip = agent_detail(learned.version, learned.sign_in), agent_tooltip(name, learned.version, learned.sign_in)
        models.append(_model(entry.id, f"{name} (ACP)", detail, context=learned.contexts.get(entry.id), ratio=ratio, tooltip=tooltip, images=images, schema=schema))
        for value in agent_options.model_values(learned.choices):
            model_id = f"{entry.id}/{value.value}"
            choices = learned.choices_for(value.value)
            models.append(
                _model(
                    model_id,
                    f"{name} · {value.name}",
                    f"{name} (ACP) · {SIGN_IN_NOTE}" if learned.sign_in else f"{name} (ACP)",
                    context=learned.contexts.get(model_id),
                    ratio=ratio,
                    tooltip=value.description or None,
                    images=images,
                    schema=schema if choices is learned.choices else model_configuration.configuration_schema(choices, settings),
                )
            )
    return models

