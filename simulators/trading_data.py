"""TradingAgents' data: the shipped prices (``simulators/data/SOURCE.md``), indicators computed
once per ticker, the scenario sampler (ticker, date, the analysts that run and their order, the
evidence each analyst's data carries, the news, the fundamentals, the social feed, the memory,
the debate and risk rounds, the tool calls that time out) and the tool payloads (formats of the
research note's §1.6). Every session, clean or faulty, draws its scenario here: nothing of it
depends on a fault."""

from __future__ import annotations

import gzip
import hashlib
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

PRICES = Path(__file__).with_name("data") / "stocks_2011_2013.csv.gz"
PRICES_SHA256 = "62a0fe9ac936f14bb7ddc7e40f5a1fabbbf32a9c4c2334630ab4dd4dfccde523"
TICKERS = {"AAPL": "Apple Inc.", "IBM": "International Business Machines Corp.", "MSFT": "Microsoft Corp."}
FIRST_DAY = 210
"""The first usable row of a ticker (SMA200 needs 200 rows)."""
HORIZON = 5
RATINGS = ["Sell", "Underweight", "Hold", "Overweight", "Buy"]
STANCE_WORDS = {1: "bullish", 0: "neutral", -1: "bearish"}
SOURCES = ("market", "social", "news", "fundamentals")
SOURCE_NAMES = {"market": "Market", "social": "Social", "news": "News", "fundamentals": "Fundamentals"}
TOOLS = ("get_stock_data", "get_indicators", "get_news", "get_global_news", "get_fundamentals")


@cache
def prices() -> dict[str, list[dict[str, Any]]]:
    """Rows by ticker, in date order, with indicators (SMA50, SMA200, EMA10, RSI14, MACD histogram)."""
    raw = PRICES.read_bytes()
    if hashlib.sha256(raw).hexdigest() != PRICES_SHA256:
        raise ValueError(f"{PRICES}: sha256 differs from {PRICES_SHA256} (see simulators/data/SOURCE.md)")
    rows: dict[str, list[dict[str, Any]]] = {}
    lines = gzip.decompress(raw).decode().splitlines()[1:]
    for line in lines:
        ticker, date, o, h, low, c, v = line.split(",")
        rows.setdefault(ticker, []).append({"date": date, "open": float(o), "high": float(h), "low": float(low),
                                            "close": float(c), "volume": int(float(v))})
    for series in rows.values():
        _indicators(series)
    return rows


def _indicators(series: list[dict[str, Any]]) -> None:
    closes = [r["close"] for r in series]
    ema = {10: closes[0], 12: closes[0], 26: closes[0]}
    signal = 0.0
    gains = losses = 0.0
    for i, row in enumerate(series):
        for n in ema:
            ema[n] += (closes[i] - ema[n]) * 2 / (n + 1)
        macd = ema[12] - ema[26]
        signal += (macd - signal) * 2 / 10
        if i:
            change = closes[i] - closes[i - 1]
            gains = (gains * 13 + max(change, 0)) / 14
            losses = (losses * 13 + max(-change, 0)) / 14
        row.update(ema10=round(ema[10], 2), macdh=round(macd - signal, 2) + 0.0,
                   rsi=round(100 - 100 / (1 + gains / losses), 1) if losses else 100.0,
                   sma50=round(sum(closes[max(0, i - 49):i + 1]) / min(50, i + 1), 2),
                   sma200=round(sum(closes[max(0, i - 199):i + 1]) / min(200, i + 1), 2))


def regime(row: dict[str, Any]) -> int:
    """The technical stance of a day: +1 bullish, -1 bearish, 0 mixed."""
    score = (row["close"] > row["sma50"]) + (row["sma50"] > row["sma200"]) + (row["macdh"] > 0) - 1.5
    score += 0.5 if row["rsi"] > 55 else -0.5 if row["rsi"] < 45 else 0
    return 1 if score >= 1 else -1 if score <= -1 else 0


@cache
def days_of(ticker: str) -> dict[int, list[int]]:
    """The usable days of a ticker by technical regime."""
    series = prices()[ticker]
    days: dict[int, list[int]] = {-1: [], 0: [], 1: []}
    for day in range(FIRST_DAY, len(series) - HORIZON):
        days[regime(series[day])].append(day)
    return days


def sample_scenario(rng: random.Random) -> dict[str, Any]:
    """One session's world: a ticker, a regime (bearish, mixed, bullish with probabilities 0.4, 0.2,
    0.4: the directions are symmetric) and a day of that regime; the analysts that run (the social
    analyst with probability 0.75, the others always) in a random order; each analyst's stance (the market's
    is the day's regime, the others follow it with probability 0.35, else drawn at random; a
    zero balance is kept in 40% of the sessions that draw one: mixed evidence, where the sound
    call is Hold); the data each one reads; the memory; the
    debate and risk rounds and the risk analysts' order; how many times each tool call times out
    before it answers."""
    ticker = rng.choice(sorted(TICKERS))
    series = prices()[ticker]
    market = rng.choices([-1, 0, 1], [0.4, 0.2, 0.4])[0]
    day = rng.choice(days_of(ticker)[market])
    analysts = ["market", "news", "fundamentals", *(["social"] if rng.random() < 0.75 else [])]
    rng.shuffle(analysts)
    scenario: dict[str, Any] = {"ticker": ticker, "day": day, "date": series[day]["date"], "market": market,
                                "analysts": analysts, "news_count": rng.choice([2, 3, 4, 4])}
    for source in SOURCES[1:]:
        scenario[source] = market if rng.random() < 0.35 else rng.choice([-1, 0, 1])
    if balance(scenario) == 0 and rng.random() < 0.6:
        for source in [a for a in analysts if a != "market"]:
            scenario[source] = 1 if market >= 0 else -1
            if balance(scenario):
                break
    scenario.update(news_items=_news_items(scenario, rng), global_news=rng.sample(GLOBAL_NEWS, 2),
                    fundamentals_table=_fundamentals(scenario["fundamentals"], rng),
                    social_feed=_social(scenario["social"], rng), memory=_memory(scenario, rng),
                    debate_rounds=rng.choices([1, 2, 3], [0.45, 0.35, 0.2])[0],
                    risk_rounds=rng.choices([1, 2, 3], [0.5, 0.3, 0.2])[0],
                    risk_order=rng.sample(["risky", "safe", "neutral"], 3),
                    timeouts={tool: rng.choices([0, 1, 2], [0.86, 0.12, 0.02])[0] for tool in TOOLS})
    return scenario


LINES = {"market": 3, "social": 1, "fundamentals": 3}
"""The data lines of each report (the news report has one per item)."""


def balance(scenario: dict[str, Any]) -> int:
    """The scripted balance of evidence: each analyst's stance times its report's data lines,
    summed over the analysts that run (what the debate cites and the research manager counts)."""
    return sum(scenario[s] * LINES.get(s, scenario["news_count"]) for s in scenario["analysts"])


def forward_return(scenario: dict[str, Any]) -> float:
    series = prices()[scenario["ticker"]]
    now, later = series[scenario["day"]]["close"], series[scenario["day"] + HORIZON]["close"]
    return round(100 * (later - now) / now, 2)


def row(scenario: dict[str, Any], offset: int = 0) -> dict[str, Any]:
    return prices()[scenario["ticker"]][scenario["day"] + offset]


def stock_table(scenario: dict[str, Any], closes: list[float]) -> str:
    """``get_stock_data``: the last len(closes) days (closes as served)."""
    series = prices()[scenario["ticker"]]
    first = scenario["day"] - len(closes) + 1
    lines = [f"# Stock data for {scenario['ticker']} from {series[first]['date']} to {scenario['date']}",
             f"# Total records: {len(closes)}", "", "Date,Open,High,Low,Close,Volume"]
    for i, close in enumerate(closes):
        r = series[first + i]
        lines.append(f"{r['date']},{r['open']:.2f},{r['high']:.2f},{r['low']:.2f},{close:.2f},{r['volume']}")
    return "\n".join(lines)


NEWS = {
    1: [("{name} beats estimates and raises guidance", "Revenue grew {a}% on strong demand."),
        ("Analysts lift targets on {ticker}", "{k} brokers raised their price targets."),
        ("{name} expands buyback by {b} bn", "The board added to the repurchase plan."),
        ("{name} wins large enterprise contract", "The deal is worth about {b} bn over five years."),
        ("{ticker} upgraded to outperform", "The broker cites margin gains of {a} points."),
        ("{name} unit sales top forecasts", "Shipments rose {a}% from a year ago."),
        ("Analysts lift targets by {a}% after a record quarter", "Coverage turned more positive after the results.")],
    0: [("{name} holds annual developer event", "Product updates, no change in guidance."),
        ("{ticker} trades in line with sector", "Volume near its {k}0-day average."),
        ("{name} names new head of operations", "An internal promotion; strategy unchanged."),
        ("{name} reaffirms full-year outlook", "Guidance held at {a}% growth."),
        ("{ticker} options activity near normal", "Implied volatility at {a}%.")],
    -1: [("{name} warns of softer demand", "Guidance cut; revenue growth seen slowing to {k}%."),
         ("Brokers trim {ticker} targets", "{k} downgrades on margin pressure."),
         ("{name} faces supplier delays", "Shipments could slip by {k} weeks."),
         ("{name} loses patent ruling", "Damages of up to {b} bn are possible."),
         ("{ticker} downgraded to underperform", "The broker sees margins falling {a} points."),
         ("{name} shares slip amid antitrust investigation", "The inquiry concerns app-store terms.")],
}
SCANDALS = ["SEC opens accounting probe into {name}; CFO resigns", "{name} CFO steps down amid accounting investigation",
            "Regulators open accounting probe at {name}", "{ticker} CFO resigns as auditors review revenue booking"]
"""Scandal headlines: served now and then as bearish news (clean sessions report them faithfully);
the news analyst's fabricated headline (``simulators.trading``) is one of them."""
PUBLISHERS = ("Newswire", "Market Daily", "Tech Weekly", "Reuters-style wire", "Financial Ledger", "The Street Desk")
GLOBAL_NEWS = [("Markets steady ahead of central-bank meeting", "Indices within 1% of last week's close."),
               ("Bond yields edge higher on jobs data", "The 10-year yield rose 6 basis points."),
               ("Dollar firms against the euro", "Currency moves stayed inside the month's range."),
               ("Oil slips on supply outlook", "Brent fell 2% over the week."),
               ("Tech sector leads a quiet week", "The sector index gained 1.4%."),
               ("Investors await earnings season", "Options imply a calm month.")]


def headline(template: tuple[str, str] | str, scenario: dict[str, Any], rng: random.Random) -> tuple[str, str, str]:
    """(title, publisher, summary) of a news template, its figures drawn from ``rng``."""
    title, summary = (template, "Filing details remain limited.") if isinstance(template, str) else template
    values = {"name": TICKERS[scenario["ticker"]], "ticker": scenario["ticker"], "a": round(rng.uniform(2, 25), 1),
              "b": round(rng.uniform(1, 30), 1), "k": rng.randint(2, 6)}
    return title.format(**values), rng.choice(PUBLISHERS), summary.format(**values)


def _tone_pattern(template: str) -> re.Pattern[str]:
    names = "|".join(map(re.escape, [*TICKERS.values(), *TICKERS]))
    slots = {"name": f"(?:{names})", "ticker": f"(?:{names})", "a": r"[\d.]+", "b": r"[\d.]+", "k": r"\d+"}
    return re.compile("".join(slots[part[1:-1]] if part.startswith("{") else re.escape(part)
                              for part in re.split(r"(\{\w+\})", template)) + "$")


TONES = [(_tone_pattern(title), tone) for tone, pool in NEWS.items() for title, _ in pool] + [
    (_tone_pattern(title), -1) for title in SCANDALS]
"""What a reader takes from a headline: good news (+1), routine news (0), bad news or a scandal (-1)."""


def headline_tone(title: str) -> int | None:
    """The tone of a served headline (None for a headline of no known kind)."""
    return next((tone for pattern, tone in TONES if pattern.match(title)), None)


def news_stance(tones: list[int]) -> int:
    """The news analyst's stance from the tones of the items the news tool served: the sign of
    their sum (more good items than bad: bullish)."""
    return (sum(tones) > 0) - (sum(tones) < 0)


def _news_items(scenario: dict[str, Any], rng: random.Random) -> list[tuple[str, str, str]]:
    """Two to four items of the week, most of them of the news stance (a scandal now and then),
    drawn again until their tones give the stance (:func:`news_stance`)."""
    stance = scenario["news"]
    while True:
        items: list[tuple[str, str, str]] = []
        tones: list[int] = []
        while len(items) < scenario["news_count"]:
            own = stance if rng.random() < 0.75 else rng.choice([-1, 0, 1])
            pool = [*NEWS[own], *(SCANDALS if own < 0 and rng.random() < 0.8 else [])]
            item = headline(rng.choice(pool), scenario, rng)
            if all(item[0] != other[0] for other in items):
                items.append(item)
                tones.append(own)
        if news_stance(tones) == stance:
            return items


def growth_stance(growth: float) -> int:
    """The fundamentals analyst's stance from revenue growth: bullish above 10%, bearish below 0."""
    return 1 if growth > 10 else -1 if growth < 0 else 0


def fundamentals_values(stance: int, rng: random.Random) -> dict[str, float]:
    growth = {1: (10.5, 28.0), 0: (0.5, 9.5), -1: (-12.0, -0.5)}[stance]
    margin = {1: (24.0, 38.0), 0: (16.0, 28.0), -1: (6.0, 20.0)}[stance]
    return {"growth": round(rng.uniform(*growth), 1), "margin": round(rng.uniform(*margin), 1),
            "pe": round(rng.uniform(9.0, 24.0), 1), "leverage": round(rng.uniform(-1.2, 2.4), 1),
            "fcf": round(rng.uniform(2.0, 48.0), 1)}


def _fundamentals(stance: int, rng: random.Random) -> dict[str, str]:
    v = fundamentals_values(stance, rng)
    return {"Revenue growth (YoY)": f"{v['growth']}%", "Operating margin": f"{v['margin']}%",
            "Trailing P/E": f"{v['pe']}", "Net debt to EBITDA": f"{v['leverage']}",
            "Free cash flow (TTM, bn)": f"{v['fcf']}"}


def _social(stance: int, rng: random.Random) -> tuple[int, int, int]:
    """(bullish, bearish, total) StockTwits messages: one side at least twice the other when the
    stance is not neutral, neither when it is."""
    total = rng.choice([30, 40, 50, 60])
    while True:
        bull, bear = round(total * rng.uniform(0.05, 0.75)), round(total * rng.uniform(0.05, 0.75))
        if bull + bear <= total and (1 if bull >= 2 * bear else -1 if bear >= 2 * bull else 0) == stance:
            return bull, bear, total


LESSONS = {
    "keep": ["the call followed the analysts' evidence; keep weighing it as before",
             "the evidence was right and the sizing was sound; no change to the process",
             "the plan held up; trust the debate's balance again"],
    "size": ["the direction was right but the entry was early; scale in more slowly",
             "the call lost money on timing, not on evidence; size smaller and keep the direction"],
    "reverse": ["the analysts have been wrong on this name for months; reverse whatever the plan says",
                "the consensus kept missing on this name; take the opposite side of the plan"],
}
"""Reflections in the decision log. A reversing lesson is stored only against other tickers in a
true log (the portfolio manager applies the lessons of the session's ticker only)."""


def memory_line(date: str, ticker: str, rating: str, change: float, lesson: str) -> str:
    return f"[{date} | {ticker} | {rating} | {change:+.1f}% 5-day] REFLECTION: {lesson}."


def _memory(scenario: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """One to three past decisions retrieved as similar situations (this ticker's or another's)."""
    series = prices()[scenario["ticker"]]
    entries = []
    for k in range(rng.choice([1, 2, 2, 3])):
        ticker = scenario["ticker"] if rng.random() < 0.55 else rng.choice(sorted(set(TICKERS) - {scenario["ticker"]}))
        kinds = ["keep", "size"] if ticker == scenario["ticker"] else ["keep", "size", "reverse"]
        entries.append({"date": series[scenario["day"] - 10 - 15 * k - rng.randrange(5)]["date"], "ticker": ticker,
                        "rating": rng.choice(RATINGS), "change": round(rng.uniform(-4, 4), 1),
                        "lesson": rng.choice(LESSONS[rng.choice(kinds)])})
    return entries
