"""北辰云退款策略引擎。

规则编号与 billing/README.md 的「退款规则」一节一一对应，改规则时两边必须同步修改，
客户成功部的话术库也引用这些编号。
"""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from .models import (BillingCycle, InvoiceType, ItemKind, Order, Refund,
                     RefundStatus)
from .pricing import VAT_RATE, money

logger = logging.getLogger("billing.refunds")

FULL_REFUND_WINDOW = timedelta(days=7)      # 支付成功起 7×24 小时
MIN_REMAINING_DAYS = 30                     # 剩余付费天数不足 30 天不退
AUTO_APPROVE_LIMIT = Decimal("5000")        # 含税 ≤ 5,000 元自动通过
FINANCE_REVIEW_LIMIT = Decimal("50000")     # 含税 > 50,000 元需财务部复核
ARRIVAL_WORKDAYS = {"wechat": 3, "alipay": 3, "card": 5, "bank_transfer": 7}


@dataclass
class RefundDecision:
    refundable: bool
    net_amount: Decimal = Decimal("0")
    rule: str = ""
    status: RefundStatus = RefundStatus.REJECTED
    approver_role: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tax_amount(self) -> Decimal:
        return money(self.net_amount * VAT_RATE)

    @property
    def total(self) -> Decimal:
        return self.net_amount + self.tax_amount


def evaluate_refund(order: Order, requested_at: datetime, *,
                    duplicate_charge: Decimal | None = None,
                    account_status: str = "active") -> RefundDecision:
    """根据订单与申请时间计算可退金额（不含税）并给出审批路由。

    处理顺序不能随意调整：先看账户状态，再看重复扣款，然后才是 7 天无理由、
    月付、按比例退款；最后统一处理发票与审批。
    """
    notes: list[str] = []

    # ---------- 1. 前置校验：账户状态与订单状态 ----------
    if account_status in ("suspended_violation", "arrears"):
        # 因违规封停或欠费停用的账户，不适用任何退款规则
        return RefundDecision(False, rule="R0-BLOCKED",
                              notes=["账户处于违规封停或欠费状态，不予退款"])
    if requested_at < order.paid_at:
        raise ValueError("退款申请时间早于支付时间，请检查订单数据")
    if order.refunded_amount >= order.net_paid:
        return RefundDecision(False, rule="R0-DONE", notes=["该订单已全额退款"])

    # ---------- 2. 重复扣款：不受任何时限约束 ----------
    if duplicate_charge is not None:
        if duplicate_charge <= 0:
            raise ValueError("重复扣款金额必须大于 0")
        # 重复扣款款项按含税金额到账，这里折回不含税金额，再由 tax_amount 补税
        net = money(duplicate_charge / (1 + VAT_RATE))
        notes.append("重复扣款全额退还，不受 7 天限制，不占用审批额度")
        return RefundDecision(True, net, "R1-DUP", RefundStatus.APPROVED,
                              approver_role=None, notes=notes)

    # ---------- 3. 拆分明细：硬件、实施服务、短信包、订阅 ----------
    within_window = requested_at - order.paid_at <= FULL_REFUND_WINDOW
    refund_net = Decimal("0")
    rule = ""

    hardware = order.items_of(ItemKind.HARDWARE)
    if hardware:
        notes.append("订单含硬件，硬件部分转硬件售后处理，不在本引擎计算")

    for item in order.items_of(ItemKind.IMPLEMENTATION):
        if item.delivered:
            notes.append(f"{item.description} 已签署实施完成确认单，实施服务费不退")
        elif within_window:
            refund_net += item.subtotal
        else:
            # 超过 7 天但实施未交付：按未交付处理，需人工确认交付进度
            notes.append(f"{item.description} 未交付但已超过 7 天，需实施经理确认")

    for item in order.items_of(ItemKind.SMS_PACK):
        unused = max(item.quantity - item.units_used, 0)
        if unused and item.quantity:
            refund_net += money(item.subtotal * unused / item.quantity)
            notes.append(f"短信包未使用 {unused} 条，按条数比例退还")

    subscriptions = order.items_of(ItemKind.SUBSCRIPTION)

    # ---------- 4. 7 天无理由：订阅费全额退款 ----------
    if within_window:
        refund_net += sum((s.subtotal for s in subscriptions), Decimal("0"))
        rule = "R2-7DAY"
        notes.append("支付后 7×24 小时内申请，订阅费全额退还")

    # ---------- 5. 月付：超过 7 天不退，只能关闭自动续费 ----------
    elif order.cycle == BillingCycle.MONTHLY:
        rule = "R3-MONTHLY"
        notes.append("月付订单超过 7 天不退订阅费，可在「账户中心-自动续费」关闭续费")

    # ---------- 6. 季付 / 年付：按剩余付费天数比例退款 ----------
    else:
        rule = "R4-PRORATA"
        today = requested_at.date()
        for sub in subscriptions:
            if sub.service_start is None or sub.service_end is None:
                raise ValueError(f"订阅明细 {sub.sku} 缺少服务起止日期")
            # 赠送天数附加在服务期末尾，既不计入付费总天数，也不计入剩余天数
            paid_days = sub.service_days - sub.gift_days
            remaining = (sub.service_end - max(today, sub.service_start)).days
            paid_remaining = max(remaining - sub.gift_days, 0)
            if sub.gift_days:
                notes.append(f"赠送的 {sub.gift_days} 天不折现，不计入剩余天数")
            if paid_remaining < MIN_REMAINING_DAYS:
                rule = "R5-LT30"
                notes.append(f"剩余付费天数 {paid_remaining} 天，不足 "
                             f"{MIN_REMAINING_DAYS} 天，订阅费不予退款")
                continue
            used_days = paid_days - paid_remaining
            prorata = money(sub.subtotal * paid_remaining / paid_days)
            # 已使用期间按原价重新核算：扣回这段时间享受的周期折扣
            clawback = money(order.cycle_discount * used_days / paid_days)
            refund_net += max(prorata - clawback, Decimal("0"))
            notes.append(f"剩余 {paid_remaining}/{paid_days} 天，按比例 {prorata} 元，"
                         f"扣回已用期间周期折扣 {clawback} 元")

    # 已退过的部分（例如先退了短信包）要扣除
    refund_net = money(max(refund_net - order.refunded_amount, Decimal("0")))
    if refund_net == 0:
        return RefundDecision(False, rule=rule or "R0-NONE", notes=notes)

    # ---------- 7. 审批路由：按含税金额 ----------
    decision = RefundDecision(True, refund_net, rule, notes=notes)
    total = decision.total
    if total <= AUTO_APPROVE_LIMIT:
        decision.status = RefundStatus.APPROVED
    elif total <= FINANCE_REVIEW_LIMIT:
        decision.status = RefundStatus.PENDING_REVIEW
        decision.approver_role = "客户成功部主管"
    else:
        decision.status = RefundStatus.PENDING_REVIEW
        decision.approver_role = "财务部复核"
        notes.append("含税退款金额超过 5 万元，需财务部复核，时效 2 个工作日")

    # ---------- 8. 发票：已开票必须先红冲 ----------
    invoice = order.invoice
    if invoice is not None and not invoice.red_reversed:
        if invoice.invoice_type == InvoiceType.SPECIAL:
            notes.append("已开数电专票：需购买方在电子税务局确认《红字发票信息确认单》")
        else:
            notes.append("已开数电普票：由我方直接开具红字发票，无需客户操作")
        if decision.status == RefundStatus.APPROVED:
            decision.status = RefundStatus.WAITING_RED_INVOICE

    # ---------- 9. 硬件转人工时，整单标记 ----------
    if hardware and decision.status == RefundStatus.APPROVED:
        decision.status = RefundStatus.MANUAL
        decision.approver_role = "硬件售后"

    logger.info("order=%s rule=%s net=%s status=%s", order.order_no,
                decision.rule, decision.net_amount, decision.status.value)
    return decision


def audit(action: str):
    """记录退款操作的审计日志（写入 billing.audit，保留 3 年）。"""
    def wrapper(func):
        @functools.wraps(func)
        def inner(self, *args, **kwargs):
            result = func(self, *args, **kwargs)
            logging.getLogger("billing.audit").info("%s by %s: %r", action, self.operator, result)
            return result
        return inner
    return wrapper


class RefundPolicyEngine:
    """面向客服工作台的退款服务，封装策略计算、提交与到账时间估算。"""

    def __init__(self, operator: str, *, auto_limit: Decimal = AUTO_APPROVE_LIMIT):
        self.operator = operator
        self._auto_limit = auto_limit
        self._seq = 0

    @classmethod
    def from_config(cls, config: dict) -> "RefundPolicyEngine":
        limit = Decimal(str(config.get("auto_approve_limit", AUTO_APPROVE_LIMIT)))
        return cls(config["operator"], auto_limit=limit)

    @property
    def auto_limit(self) -> Decimal:
        return self._auto_limit

    @staticmethod
    def estimate_arrival(channel: str, approved_on: date) -> date:
        """按工作日估算到账日期（不考虑法定节假日调休）。"""
        days, current = ARRIVAL_WORKDAYS.get(channel, 7), approved_on
        while days:
            current += timedelta(days=1)
            if current.weekday() < 5:
                days -= 1
        return current

    @audit("evaluate")
    def evaluate(self, order: Order, requested_at: datetime, **kwargs) -> RefundDecision:
        return evaluate_refund(order, requested_at, **kwargs)

    @audit("submit")
    def submit(self, order: Order, decision: RefundDecision) -> Refund:
        if not decision.refundable:
            raise ValueError(f"订单 {order.order_no} 不满足退款条件：{decision.rule}")
        self._seq += 1
        refund_no = f"RF{order.order_no[2:]}{self._seq:03d}"
        return Refund(refund_no, order.order_no, decision.net_amount, decision.tax_amount,
                      decision.status, decision.rule, decision.approver_role,
                      list(decision.notes))
