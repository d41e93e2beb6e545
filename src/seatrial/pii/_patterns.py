"""The patterns and checks of each kind of personal data, read on folded text.

Every pattern runs on text folded to its compatibility forms (``_fold``), with ``re.ASCII``:
``\\d`` is ``[0-9]`` and an Arabic-Indic or other script's digit is not read as one.

A value stands apart: the character before it and the one after it are not a Latin letter,
a digit, ``_`` or ``*`` (an order number ``A13912345678``, a request id
``req-9f13912345678a``, a waybill ``SF1400000000001`` and a value already masked
``138****8000`` are not personal data). A Chinese character or any punctuation does set it
apart (``电话13912345678`` is a phone number). A number is not part of a decimal either
(``0.13912345678``, ``13912345678.5``).
"""

from __future__ import annotations

import datetime
import re

# Not a Latin letter, digit, ``_`` or ``*`` before or after, and not inside a decimal.
BEFORE = r"(?<![0-9A-Za-z_*])(?<![0-9]\.)"
AFTER = r"(?![0-9A-Za-z_*])(?!\.[0-9])"

# A mainland mobile: 11 digits from 13-19, together or in groups of 3-4-4 set apart by
# spaces or hyphens, or by dots in both gaps (``139.8765.4321``; a dot in one gap only is a
# decimal: ``139.87654321``), after an optional country code.
_MOBILE = r"1[3-9]\d(?:[ -]?\d{4}){2}|1[3-9]\d\.\d{4}\.\d{4}"
PHONE = re.compile(rf"{BEFORE}(?:(?:\+|00)?86[ -]?)?(?:{_MOBILE}){AFTER}", re.ASCII)

# A landline a person may own: an area code (010 and 02X take an 8-digit local number, the
# 4-digit codes 0[3-9]XX a 7- or 8-digit one) and an optional extension. The area code is set
# apart by a hyphen, a space or brackets, or follows the country code without its 0
# (``+86-10-62345670``); the local number may be split 4-4 or 3-4 (``021-6234-5678``).
# Written together with the local number it is told from an order number only after a word
# such as 电话 or tel, which also introduces a bare local number.
_LOCAL_8 = r"(?:\d{4}[ -]\d{4}|\d{8})"
_LOCAL_7_8 = r"(?:\d{4}[ -]\d{4}|\d{3}[ -]\d{4}|\d{7,8})"
_AREA_LOCAL = ((r"(?:010|02\d)", _LOCAL_8), (r"0[3-9]\d{2}", _LOCAL_7_8))
_APART = "|".join(f"(?:[(（]{area}[)）][ -]?|{area}[ -]){local}" for area, local in _AREA_LOCAL)
_ABROAD = rf"(?:\+|00)86[ -]?(?:(?:10|2\d)[ -]?{_LOCAL_8}|[3-9]\d{{2}}[ -]?{_LOCAL_7_8})"
_TOGETHER = "|".join(f"{area}{local}" for area, _ in _AREA_LOCAL for local in [r"\d{7,8}"])
LANDLINE_APART = re.compile(rf"{BEFORE}(?:{_APART}|{_ABROAD})(?:-\d{{1,5}})?{AFTER}", re.ASCII)
LEAD_WORDS = ("电话", "热线", "座机", "拨打", "致电", "tel", "phone", "call")
LANDLINE_AFTER_WORD = re.compile(
    r"(?:电话|热线|座机|拨打|致电|(?<![a-z])(?:tel|phone|call))[\s:：.是为]*"
    rf"(?P<number>(?:{_TOGETHER}|\d{{7,8}})(?:-\d{{1,5}})?){AFTER}",
    re.ASCII | re.IGNORECASE,
)

# Mainland ID numbers: 18 characters (the last a GB 11643 checksum) or the 15 digits issued
# before 1999 (no checksum: its province code and birth date must be real). Either may be
# written in groups, 6-8-4 (``110101 19900307 1234``) or 6-6-3, set apart by spaces or
# hyphens.
ID_CARD_18 = re.compile(rf"{BEFORE}\d{{6}}[ -]?\d{{8}}[ -]?\d{{3}}[\dXx]{AFTER}", re.ASCII)
ID_CARD_15 = re.compile(rf"{BEFORE}\d{{6}}[ -]?\d{{6}}[ -]?\d{{3}}{AFTER}", re.ASCII)
_PROVINCES = frozenset(
    [*range(11, 16), *range(21, 24), *range(31, 38), *range(41, 47), *range(50, 55)]
    + [*range(61, 66), 71, 81, 82]
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

# 14 to 19 digits, together or with single spaces or hyphens between them; luhn_ok and
# card_prefix_ok decide.
CARD = re.compile(rf"{BEFORE}\d(?:[ -]?\d){{13,18}}{AFTER}", re.ASCII)

# An email address. The local part is ASCII, or ends in a Chinese character (``张三@``): then
# it is at most the eight characters before the ``@`` (Chinese text runs on into it without a
# space), after a word such as 邮箱 or 发到 (email_start). The domain's labels may be Chinese,
# and it ends in a Latin top-level domain or one of the Chinese ones below (``公司``,
# ``中国``), which Chinese text may follow without a space.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CHINESE_TLDS = (
    "中国|中國|公司|网络|網絡|在线|在線|商城|商店|商标|集团|我爱你|中文网|中信|移动|手机|网站"
    "|网店|网址|游戏|娱乐|企业|信息|健康|广东|佛山|时尚|微博|购物|香港|台湾|台灣|新加坡|澳门"
    "|澳門|政务|公益|八卦|慈善|联通|点看|书籍|餐厅|食品|家電|通販"
)
_LOCAL_EDGE = r"(?<![A-Za-z0-9._%+*\-])"
EMAIL = re.compile(
    rf"{_LOCAL_EDGE}(?:[A-Za-z0-9._%+\-]+|[{_CJK}A-Za-z0-9._%+\-]{{0,7}}[{_CJK}])"
    rf"@(?:[A-Za-z0-9\-{_CJK}]+\.)+(?:[A-Za-z]{{2,}}|(?:{_CHINESE_TLDS}))"
    r"(?![A-Za-z0-9\-])",
    re.ASCII,
)
# Words that introduce an address in Chinese text run on into a Chinese local part without a
# space (``发到张三@例子.公司``): the local part starts after the last of them.
_EMAIL_LEADS = re.compile(
    "(?:邮箱地址|电子邮箱|邮箱|邮件|邮址|地址|发送到|发送至|发到|发至|发给|寄到|寄给|联系)[是为]?"
)


def email_start(text: str, start: int, at: int) -> int:
    """Where the email whose match starts at ``start`` (its ``@`` at ``at``) begins: after
    the last word such as 邮箱 or 发到 in a Chinese local part."""
    ends = [lead.end() for lead in _EMAIL_LEADS.finditer(text, start, at)]
    return start if not ends or ends[-1] == at else ends[-1]


def id_card_checksum_ok(number: str) -> bool:
    """Whether an 18-character mainland ID number's last character is its GB 11643 checksum."""
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def old_id_card_ok(number: str) -> bool:
    """Whether 15 digits read as a pre-1999 ID number: a province code and a birth date in
    the 1900s that exist (``110101 900307 123``: Beijing, 7 March 1990)."""
    if int(number[:2]) not in _PROVINCES:
        return False
    try:
        datetime.date(1900 + int(number[6:8]), int(number[8:10]), int(number[10:12]))
    except ValueError:
        return False
    return True


def luhn_ok(digits: str) -> bool:
    """Whether a digit string passes the Luhn check bank card numbers carry."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_prefix_ok(digits: str) -> bool:
    """Whether a number's length and first digits are a payment card's.

    15 to 19 digits whose issuer prefix is a card network's: 2 (Mastercard 2221-2720, Mir),
    3 (American Express, JCB, Diners Club), 4 (Visa), 5 (Mastercard, Maestro), 6 (UnionPay,
    Discover, Maestro), 81 or 82 (UnionPay, RuPay), 9 (domestic cards such as ICBC's 9558);
    or the 14 digits of a Diners Club card (30, 36, 38, 39). Never 13 digits (no card has
    been issued with 13 since the 2000s; an epoch-millisecond timestamp has 13) and never a
    number that starts with 0, 1 (where epoch micro- and nanosecond timestamps start) or 7.
    """
    if len(digits) == 14:
        return digits[:2] in ("30", "36", "38", "39")
    return 15 <= len(digits) <= 19 and (digits[0] in "234569" or digits[:2] in ("81", "82"))
