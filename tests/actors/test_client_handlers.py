"""Every client method of the table (protocol/acp/client_methods.py) has a handler, and every handler is
in the table: a capability is never declared without its handler, nor a handler left undeclared."""

from __future__ import annotations

from actors.agent.client_handlers import ClientHandlers
from actors.agent.routes import SessionRoutes
from protocol.acp.client_methods import SERVED, Kind


class _Registry:
    def __init__(self) -> None:
        self.kinds: dict[str, Kind] = {}

    def on_request(self, name: str, handler: object) -> None:
        self.kinds[name] = Kind.REQUEST

    def on_notification(self, name: str, handler: object) -> None:
        self.kinds[name] = Kind.NOTIFICATION

    def on_notifications(self, name: str, handler: object) -> None:
        self.kinds[name] = Kind.NOTIFICATIONS


async def test_each_served_method_has_its_handler_and_each_handler_is_served() -> None:
    handlers = ClientHandlers(SessionRoutes("test"), cancel_inbound=lambda _id: None, on_status=lambda _status: None)
    assert set(handlers.table()) == {method.name for method in SERVED}
    registry = _Registry()
    handlers.register(registry)
    assert registry.kinds == {method.name: method.kind for method in SERVED}
