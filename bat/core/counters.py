"""The Nsight Compute metrics of the profile-guided search method, by their short names.

The table of METHODS.md ("Profile-guided search"): ops counters (amounts the
tuning parameters change) and stress counters (utilisations). Dataset
columns carry the metric names; the short names are for code and output.
"""

from __future__ import annotations

_INST = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"

#: short name -> Nsight Compute metric
METRICS: dict[str, str] = {
    "DRAM_RT": "dram__sectors_read.sum",
    "DRAM_WT": "dram__sectors_write.sum",
    "L2_RT": "lts__t_sectors_op_read.sum",
    "L2_WT": "lts__t_sectors_op_write.sum",
    "TEX_RWT": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "LOC_ST": "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "SHR_LT": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "SHR_WT": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "INST_F32": _INST.format("fp32"),
    "INST_F64": _INST.format("fp64"),
    "INST_INT": _INST.format("integer"),
    "INST_MISC": _INST.format("misc"),
    "INST_LDST": _INST.format("memory"),
    "INST_CONT": _INST.format("control"),
    "INST_BCONV": _INST.format("conversion"),
    "INST_EXE": "smsp__inst_executed.sum",
    "INST_ISSUE_U": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "DRAM_U": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "L2_U": "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "TEX_U": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active",
    "SHR_U": "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "SM_E": "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "WARP_RATIO": "smsp__thread_inst_executed_per_inst_executed.ratio",
    "WARP_NP_E": "smsp__thread_inst_executed_per_inst_executed.pct",
}

#: the instruction-type counters, in the order bottlenecks are reported
INSTRUCTION_TYPES: tuple[str, ...] = (
    "INST_F32", "INST_F64", "INST_INT", "INST_MISC", "INST_LDST", "INST_CONT", "INST_BCONV",
)

#: every metric ``bat record --counters`` collects (the method needs all of them)
SPEC_METRICS: tuple[str, ...] = tuple(METRICS.values())


