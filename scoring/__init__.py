"""Pure scoring library for reader studies (SCORING.md is the normative spec).

Humans and models go through the same functions. Start with
``score_responses(frame)``; ``scoring.io`` reads RadLE and model-output files.
This package imports no application code (no streamlit, sqlmodel, pydicom).
"""

from scoring.agreement import cohen_kappa, fleiss_kappa, outcome_table
from scoring.aid import (
    AIDED_POOL_NAME,
    SWITCH_COLUMNS,
    score_with_aid,
    switch_figures,
    switch_table,
)
from scoring.arms import AID_COLUMNS, AIDED_SUFFIX, ARMS, aided_name, split_arms
from scoring.audit import ARMS as AUDIT_ARMS
from scoring.audit import AuditParams, audit_report, category_of
from scoring.bootstrap import (
    bootstrap_counts,
    percentile_ci,
    resample_weights,
    responder_counts,
    two_way_pool_counts,
)
from scoring.categories import (
    CATEGORY_NAMES,
    N_CATEGORIES,
    STATUSES,
    WEIGHTS,
    category_points,
)
from scoring.fabrication import fabrication_rates
from scoring.frame import TIDY_COLUMNS, FrameError, UngradedRowsError, validate_frame
from scoring.grounding import GROUNDING_METRICS, grounded_cases_of, grounding_report
from scoring.mrmc import MRMC_METRICS, UStat11, model_vs_pool, normal_test, u_stat11
from scoring.params import (
    H_AGGREGATES,
    HANDOVER_VARIANTS,
    SCORING_SPEC_VERSION,
    ScoringParams,
    register_handover_variant,
    register_safety_variant,
)
from scoring.permutation import sign_flip_test
from scoring.points import ResponseMatrix, build_matrix, count_vectors, row_points
from scoring.pool import Pool, build_pools, case_contributions, pool_members
from scoring.radle import (
    attempted_accuracy,
    radle_a,
    radle_c,
    radle_h,
    radle_metrics,
    radle_r,
    radle_s,
    wilson_interval,
)
from scoring.regions import (
    BoolArray,
    Box,
    Location,
    RegionError,
    box_hit,
    format_region,
    mask_hit,
    parse_region,
)
from scoring.render import format_table, report_frame, report_json, to_jsonable
from scoring.repeats import REPEAT_METRICS, repeat_groups
from scoring.rubric import (
    JUDGED_COLUMNS,
    RUBRIC_MAX,
    TIERS,
    count_unjudged,
    judged_figures,
    rubric_summary,
    rubric_tier,
)
from scoring.rubric_agreement import icc_2_1, score_histogram, tier_kappa
from scoring.rubric_compare import RubricScores, rubric_scores
from scoring.score import CI_METRICS, metrics_from_counts, responder_metrics, score_responses
from scoring.secondary import (
    aurc,
    brier_score,
    expected_calibration_error,
    likert_accuracy,
    response_profile,
    risk_coverage,
    secondary_metrics,
    spearman_rho,
)
from scoring.status import derive_status, is_idk_text, is_missing_value, parse_likert

__all__ = [
    "AIDED_POOL_NAME",
    "AIDED_SUFFIX",
    "AID_COLUMNS",
    "ARMS",
    "AUDIT_ARMS",
    "CATEGORY_NAMES",
    "CI_METRICS",
    "GROUNDING_METRICS",
    "HANDOVER_VARIANTS",
    "H_AGGREGATES",
    "JUDGED_COLUMNS",
    "MRMC_METRICS",
    "N_CATEGORIES",
    "REPEAT_METRICS",
    "RUBRIC_MAX",
    "SCORING_SPEC_VERSION",
    "STATUSES",
    "SWITCH_COLUMNS",
    "TIDY_COLUMNS",
    "TIERS",
    "WEIGHTS",
    "AuditParams",
    "BoolArray",
    "Box",
    "FrameError",
    "Location",
    "Pool",
    "RegionError",
    "ResponseMatrix",
    "RubricScores",
    "ScoringParams",
    "UStat11",
    "UngradedRowsError",
    "aided_name",
    "attempted_accuracy",
    "audit_report",
    "aurc",
    "bootstrap_counts",
    "box_hit",
    "brier_score",
    "build_matrix",
    "build_pools",
    "case_contributions",
    "category_of",
    "category_points",
    "cohen_kappa",
    "count_unjudged",
    "count_vectors",
    "derive_status",
    "expected_calibration_error",
    "fabrication_rates",
    "fleiss_kappa",
    "format_region",
    "format_table",
    "grounded_cases_of",
    "grounding_report",
    "icc_2_1",
    "is_idk_text",
    "is_missing_value",
    "judged_figures",
    "likert_accuracy",
    "mask_hit",
    "metrics_from_counts",
    "model_vs_pool",
    "normal_test",
    "outcome_table",
    "parse_likert",
    "parse_region",
    "percentile_ci",
    "pool_members",
    "radle_a",
    "radle_c",
    "radle_h",
    "radle_metrics",
    "radle_r",
    "radle_s",
    "register_handover_variant",
    "register_safety_variant",
    "repeat_groups",
    "report_frame",
    "report_json",
    "resample_weights",
    "responder_counts",
    "responder_metrics",
    "response_profile",
    "risk_coverage",
    "row_points",
    "rubric_scores",
    "rubric_summary",
    "rubric_tier",
    "score_histogram",
    "score_responses",
    "score_with_aid",
    "secondary_metrics",
    "sign_flip_test",
    "spearman_rho",
    "split_arms",
    "switch_figures",
    "switch_table",
    "tier_kappa",
    "to_jsonable",
    "two_way_pool_counts",
    "u_stat11",
    "validate_frame",
    "wilson_interval",
]
