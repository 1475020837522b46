"""Three tiny apps in the style of AppWorld (shopping, calendar, mail), as tools an agent can call."""

from __future__ import annotations

SHOP = {"widget": 12.50, "gadget": 19.99, "doohickey": 22.00, "sprocket": 7.25, "gizmo": 31.00}
CALENDAR = {
    "tomorrow": [("team meeting", "15:00"), ("dentist", "09:30")],
    "friday": [("budget review", "11:00")],
}
INBOX = [
    {"from": "Alice", "subject": "Invoice 1042", "unread": True},
    {"from": "Bob", "subject": "Lunch on Friday?", "unread": True},
    {"from": "Carol", "subject": "Slides for the review", "unread": False},
]


def shopping(max_price: float = 20.0) -> str:
    items = [f"{name} ({price:.2f})" for name, price in SHOP.items() if price < max_price]
    return f"items under {max_price:g}: " + ", ".join(items)


def calendar(day: str = "tomorrow") -> str:
    events = CALENDAR.get(day, [])
    return f"events {day}: " + "; ".join(f"{title} at {time}" for title, time in events)


def mail() -> str:
    unread = sum(message["unread"] for message in INBOX)
    listing = "; ".join(f"from {m['from']}: {m['subject']}" for m in INBOX)
    return f"{unread} unread emails. {listing}"


TOOLS = {"shopping": shopping, "calendar": calendar, "mail": mail}
