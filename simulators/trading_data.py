"""TradingAgents' data: the shipped prices (``simulators/data/SOURCE.md``), indicators computed
once per ticker, the scenario sampler (ticker, date, the evidence each analyst's data carries)
and the tool payloads (formats of the research note's §1.6)."""

from __future__ import annotations

import gzip
import hashlib
import random
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


def sample_scenario(rng: random.Random) -> dict[str, Any]:
    """A ticker and day, and the stance of each analyst's evidence (each follows the price
    regime with probability 0.6, else drawn at random); the balance is never zero."""
    ticker = rng.choice(sorted(TICKERS))
    series = prices()[ticker]
    day = rng.randrange(FIRST_DAY, len(series) - HORIZON)
    market = regime(series[day])
    scenario = {"ticker": ticker, "day": day, "date": series[day]["date"], "market": market,
                "memory_date": series[day - 15]["date"], "memory_rating": rng.choice(RATINGS[1:4]),
                "memory_return": round(rng.uniform(-3, 3), 1), "risk_rounds": 1}
    for source in ("news", "social", "fundamentals"):
        scenario[source] = market if rng.random() < 0.6 else rng.choice([-1, 0, 1])
    if balance(scenario) == 0:
        scenario["fundamentals"] = 1 if market >= 0 else -1
        if balance(scenario) == 0:
            scenario["news"] = scenario["fundamentals"]
    return scenario


def balance(scenario: dict[str, Any]) -> int:
    """The scripted balance of evidence: the sum of the four reports' stances."""
    return sum(scenario[s] for s in ("market", "news", "social", "fundamentals"))


def set_balance(scenario: dict[str, Any], sign: int, at_least: int = 1) -> None:
    """Make the evidence point the way ``sign`` says by at least ``at_least``, moving the
    non-market stances (the market's is the day's)."""
    for source in ("news", "social", "fundamentals"):
        if sign * balance(scenario) >= at_least:
            return
        scenario[source] = sign


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


def news_items(scenario: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(title, publisher, summary) of the week's company news, written from the news stance."""
    name, stance = TICKERS[scenario["ticker"]], scenario["news"]
    items = {
        1: [(f"{name} beats estimates and raises guidance", "Newswire", "Revenue grew 18% on strong demand."),
            (f"Analysts lift targets on {scenario['ticker']}", "Market Daily", "Three brokers raised price targets.")],
        0: [(f"{name} holds annual developer event", "Tech Weekly", "Product updates, no change in guidance."),
            (f"{scenario['ticker']} trades in line with sector", "Market Daily", "Volume near its 30-day average.")],
        -1: [(f"{name} warns of softer demand", "Newswire", "Guidance cut; revenue growth seen slowing to 2%."),
             (f"Brokers trim {scenario['ticker']} targets", "Market Daily", "Two downgrades on margin pressure.")],
    }
    return items[stance]


def fundamentals(scenario: dict[str, Any]) -> dict[str, str]:
    stance = scenario["fundamentals"]
    return {
        "Revenue growth (YoY)": {1: "14.2%", 0: "4.1%", -1: "-3.8%"}[stance],
        "Operating margin": {1: "31.5%", 0: "24.0%", -1: "17.2%"}[stance],
        "Trailing P/E": {1: "13.1", 0: "16.4", -1: "21.7"}[stance],
        "Net debt to EBITDA": {1: "-0.8 (net cash)", 0: "0.6", -1: "1.9"}[stance],
        "Free cash flow (TTM, bn)": {1: "42.3", 0: "18.7", -1: "6.1"}[stance],
    }


def social_feed(scenario: dict[str, Any]) -> tuple[int, int]:
    """(bullish, bearish) StockTwits messages of 30."""
    return {1: (21, 6), 0: (13, 12), -1: (7, 19)}[scenario["social"]]
