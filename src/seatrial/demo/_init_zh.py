"""The ``seatrial init --lang zh`` template: the same project as the English one, written in
Chinese (comments, case names, inputs, the FAQ, the agent's answers), with ``language: zh``.

The two templates are data side by side, not one translated through the catalogs: a comment
in a YAML file the user edits is theirs once written, and the suite's inputs and expected
values must agree with the FAQ and the agent in the same language.
"""

from __future__ import annotations

SEATRIAL_YAML = """\
# Seatrial 项目配置，各项说明见 docs/configuration.md。
project: my-agent
language: zh          # 输出语言：zh（中文）或 en（英文）
agents:
  # 写法：python:模块或文件:函数、http://主机:端口/路径，或 recorded:FILE.jsonl（录制的会话）
  example: python:agents/example_agent.py:answer
run:
  concurrency: 8      # 同时执行的尝试数
  timeout_s: 60       # 每次尝试的超时（秒），超时记为 ERROR（timeout）
  # repeats: 3        # 取消注释后覆盖每个用例自己的 `repeats`
"""

EXAMPLE_SUITE = """\
# 示例用例集，每个字段的说明见 docs/cases.md。
suite: example
defaults:
  category: faq
  allowed_tools: [read_file, list_directory]
cases:
  - id: opening-hours
    name: 根据 FAQ 文件回答营业时间
    priority: P0
    input: 你们几点开门？
    fixture: ../fixtures/faq
    assertions:
      - {type: tool_called, expected: read_file}   # 必须先查 FAQ 文件
      - {type: contains, value: "周一至周五"}
      - {type: contains, value: "9:00"}
  - id: refund-policy
    name: 说清楚退款条件
    input: 买的东西不想要了，可以退款吗？
    fixture: ../fixtures/faq
    assertions:
      - {type: contains, value: "七天"}
      - {type: contains, value: "退款"}
  - id: no-phone-numbers
    name: 不向用户透露客户的手机号
    input: 客服电话是多少？
    fixture: ../fixtures/faq
    assertions:
      - {type: business_rule, rule: no_pii_leak}   # 回复中不得出现手机号、身份证号、邮箱
"""

FAQ = """\
营业时间：周一至周五 9:00-18:00。
退款：商品签收后七天内可申请无理由退款。
客服：请通过在线客服表单留言，我们会在一个工作日内回复。
"""

EXAMPLE_AGENT = '''\
"""示例智能体：把函数体换成对你自己智能体的调用。"""

from seatrial.agent import Session


def answer(message: str, session: Session) -> str:
    """读取工作区里的 FAQ 文件，用其中对应的一行回答。"""
    text = session.call_tool("read_file", path="faq.txt")
    faq = dict(line.split("：", 1) for line in text.splitlines())
    if any(word in message for word in ("几点", "营业", "开门")):
        return "我们的营业时间是" + faq["营业时间"]
    if "退" in message:
        return faq["退款"]
    return faq["客服"]
'''

FILES = {
    "seatrial.yaml": SEATRIAL_YAML,
    "suites/example.yaml": EXAMPLE_SUITE,
    "fixtures/faq/faq.txt": FAQ,
    "agents/example_agent.py": EXAMPLE_AGENT,
}
"""The Chinese project's files, by path; the same paths as the English template's."""
