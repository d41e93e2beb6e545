"""Long messages are cut to each platform's documented size, with a note, never refused."""

from __future__ import annotations

from seatrial.notify import AlertSettings, Notification, notify
from seatrial.notify._text import cut

LONG = "\n".join(f"- case 用例-{i:04d} 失败: the agent read the file again" for i in range(900))


async def test_a_long_message_reaches_every_platform_cut_to_its_limit_with_a_note(bot):
    bots = [bot(kind) for kind in ("feishu", "dingtalk", "wecom", "slack")]
    settings = AlertSettings.model_validate(
        {"channels": {b.kind: {"kind": b.kind, "url": b.url} for b in bots}, "backoff_s": 0}
    )
    note = Notification("daily_report", "Seatrial daily report", LONG, "https://x.test/daily")
    deliveries = await notify(settings, note)
    assert all(d.sent for d in deliveries), [d.line() for d in deliveries]
    for b in bots:
        assert b.problems == [], b.kind
        said = b.accepted[0].text()
        assert "cut:" in said and "the link has everything" in said, b.kind
        assert "https://x.test/daily" in said, b.kind  # only the text is cut, never the link
    wecom = next(b for b in bots if b.kind == "wecom").accepted[0].body["markdown"]["content"]
    assert 3500 < len(wecom.encode("utf-8")) <= 4096


def test_a_short_text_is_left_whole():
    assert cut("short", 10) == "short"


def test_cutting_by_bytes_never_splits_a_character_and_stays_within_the_limit():
    text = "失败" * 3000
    kept = cut(text, 4096, "bytes")
    assert len(kept.encode("utf-8")) <= 4096
    kept.encode("utf-8").decode("utf-8")  # whole characters only
    assert kept.endswith("more characters")
