"""The JZS Bayes factor of a one-sample or paired t-test, computed in log space.

Rouder et al. (2009), eq. 1, with a Cauchy prior of scale r on the effect size:

    BF10 = integral_0^inf (1 + n g r^2)^-1/2 (1 + t^2 / ((1 + n g r^2) df))^-(df+1)/2
                          (2 pi)^-1/2 g^-3/2 exp(-1/(2g)) dg  /  (1 + t^2/df)^-(df+1)/2

pingouin.bayesfactor_ttest evaluates this directly; for a large |t| and n (a paper-sized
study: n = 400, t = -166.8, or n = 1080, t = -80) both the integral and the denominator
underflow to 0 and it raises ZeroDivisionError. Here the integrand is integrated as
exp(log f - max log f) over u = log g, so log BF10 stays finite however large the evidence.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_PRIOR_SCALE = 0.707
# exp() of more than this overflows a float64: such BF10 are reported as a bound.
MAX_LOG_FLOAT = math.log(np.finfo(float).max)


def _log_integrand(u: float, t: float, n: int, df: int, r: float) -> float:
    """Return log of the integrand at g = exp(u), times the Jacobian dg = g du."""
    g = math.exp(u)
    scaled = 1.0 + n * g * r * r
    return (
        -0.5 * math.log(scaled)
        - (df + 1) / 2.0 * math.log1p(t * t / (scaled * df))
        - 0.5 * math.log(2.0 * math.pi)
        - 1.5 * u
        - 1.0 / (2.0 * g)
        + u
    )


def jzs_log_bf10(t: float, n: int, r: float = DEFAULT_PRIOR_SCALE) -> float:
    """Return the natural log of the JZS BF10 of a one-sample or paired t-test with n pairs."""
    if n < 2:
        raise ValueError(f"a t-test needs n >= 2, got {n}")
    if not math.isfinite(t):
        raise ValueError(f"t must be finite, got {t}")
    # Imported here, like scipy.stats in construct_loss: every Django process imports this
    # module (the report pages, through the job registry), and few ever compute a BF10.
    from scipy import integrate, optimize

    df = n - 1
    peak = optimize.minimize_scalar(
        lambda u: -_log_integrand(u, t, n, df, r), bounds=(-60.0, 60.0), method="bounded"
    )
    u_max, log_max = float(peak.x), -float(peak.fun)
    # Integrate the rescaled integrand around its peak; it is unimodal in u.
    value, _ = integrate.quad(
        lambda u: math.exp(_log_integrand(u, t, n, df, r) - log_max),
        u_max - 60.0,
        u_max + 60.0,
        points=[u_max],
        limit=200,
    )
    log_integral = log_max + math.log(value)
    log_denominator = -(df + 1) / 2.0 * math.log1p(t * t / df)
    return log_integral - log_denominator


def bf10_from_log(log_bf10: float) -> float:
    """Return exp(log BF10), or inf where it exceeds the largest float (a lower bound)."""
    return math.inf if log_bf10 > MAX_LOG_FLOAT else math.exp(log_bf10)
