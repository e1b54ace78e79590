"""``tinytorch._inductor.config``: the settings of PyTorch's code generator (TorchInductor),
under PyTorch's names and defaults, groups included (``triton.cudagraphs``, ``cpp.threads``,
``trace.enabled``, ...). Accepted, stored and readable, and they have no effect:
``tinytorch.compile`` is a pass-through and tinytorch runs eagerly. See
``tinytorch._dynamo._config_module`` for how unknown names behave."""
import sys

from tinytorch._dynamo._config_module import install_config_module

debug = False
disable_progress = True
verbose_progress = False
fx_graph_cache = True
fx_graph_remote_cache = None
bundle_triton_into_fx_graph_cache = None
autotune_local_cache = True
autotune_remote_cache = None
bundled_autotune_remote_cache = None
force_disable_caches = False
cpp_wrapper = False
online_softmax = True
dce = False
static_weight_shapes = True
size_asserts = True
nan_asserts = False
scalar_asserts = True
pick_loop_orders = True
inplace_buffers = True
allow_buffer_reuse = True
memory_planning = False
memory_pool = "intermediates"
use_fast_math = False
benchmark_harness = True
epilogue_fusion = True
prologue_fusion = True
epilogue_fusion_first = False
pattern_matcher = True
b2b_gemm_pass = False
post_grad_custom_pre_pass = None
post_grad_custom_post_pass = None
joint_custom_pre_pass = None
joint_custom_post_pass = None
pre_grad_custom_pass = None
split_cat_fx_passes = True
efficient_conv_bn_eval_fx_passes = False
group_fusion = False
batch_fusion = True
pre_grad_fusion_options = {}
post_grad_fusion_options = {}
reorder_for_locality = True
dynamic_scale_rblock = True
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
reorder_for_compute_comm_overlap = False
reorder_for_peak_memory = True
estimate_op_runtime = "default"
max_autotune = False
max_autotune_pointwise = False
max_autotune_gemm = False
max_autotune_gemm_backends = "ATEN,TRITON,CPP"
max_autotune_conv_backends = "ATEN,TRITON"
max_autotune_gemm_search_space = "DEFAULT"
autotune_fallback_to_aten = False
autotune_num_choices_displayed = 10
autotune_in_subproc = False
autotune_multi_device = False
search_autotune_cache = False
force_same_precision = True
graph_partition = False
unbacked_symint_fallback = 8192
save_args = False
coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
coordinate_descent_search_radius = 1
layout_optimization = True
force_layout_optimization = False
keep_output_stride = True
warn_mix_layout = False
realize_reads_threshold = 4
realize_opcount_threshold = 30
realize_acc_reads_threshold = 8
fallback_random = False
implicit_fallbacks = True
aggressive_fusion = False
debug_fusion = False
benchmark_fusion = False
benchmark_epilogue_fusion = True
benchmark_kernel = False
loop_ordering_after_fusion = False
score_fusion_memory_threshold = 10
max_fusion_size = 64
max_pointwise_cat_inputs = 8
force_pointwise_cat = False
unroll_reductions_threshold = 8
comment_origin = False
conv_1x1_as_mm = False
split_reductions = True
constant_and_index_propagation = True
always_keep_tensor_constants = False
assert_indirect_indexing = True
compute_all_bounds = False
combo_kernels = False
benchmark_combo_kernel = False
joint_graph_constant_folding = True
debug_index_asserts = False
emulate_precision_casts = False
optimize_scatter_upon_const_tensor = True
worker_start_method = "subprocess"
compile_threads = 1
freezing = False
freezing_discard_parameters = False
shape_padding = True
comprehensive_padding = True
pad_channels_last = False
disable_padding_cpu = True
padding_alignment_bytes = 128
padding_stride_threshold = 1024
pad_outputs = False
force_shape_pad = False
permute_fusion = False
profiler_mark_wrapper_call = False
generate_intermediate_hooks = False
debug_ir_traceback = False
profile_bandwidth = False
profile_bandwidth_regex = ""
profile_bandwidth_output = None
disable_cpp_codegen = False
allow_stack_allocation = False
use_minimal_arrayref_interface = False
decompose_mem_bound_mm = False
assume_aligned_inputs = False
cpu_backend = "cpp"
cuda_backend = "triton"
annotate_training = False
enable_linear_binary_folding = False


class triton:
    cudagraphs = False
    cudagraph_trees = True
    cudagraph_skip_dynamic_graphs = False
    slow_path_cudagraph_asserts = True
    fast_path_cudagraph_asserts = False
    cudagraph_trees_history_recording = False
    cudagraph_support_input_mutation = True
    cudagraph_unexpected_rerecord_limit = 128
    cudagraph_dynamic_shape_warn_limit = 50
    force_cudagraph_sync = False
    force_cudagraphs_warmup = False
    skip_cudagraph_warmup = False
    debug_sync_graph = False
    debug_sync_kernel = False
    dense_indexing = False
    max_tiles = 2
    prefer_nd_tiling = False
    autotune_pointwise = True
    autotune_cublasLt = True
    autotune_at_compile_time = None
    tile_reductions = False
    tiling_prevents_pointwise_fusion = True
    tiling_prevents_reduction_fusion = True
    unique_kernel_names = True
    unique_user_kernel_names = False
    descriptive_names = "original_aten"
    persistent_reductions = True
    cooperative_reductions = False
    force_cooperative_reductions = False
    multi_kernel = 0
    divisible_by_16 = True
    min_split_scan_rblock = 256
    store_cubin = False
    spill_threshold = 16
    use_block_ptr = False
    codegen_upcast_to_fp32 = True
    enable_persistent_tma_matmul = False
    skip_l1_cache = False


class cpp:
    threads = -1
    no_redundant_loops = True
    dynamic_threads = False
    simdlen = None
    min_chunk_size = 512
    cxx = (None, "g++")
    enable_kernel_profile = False
    weight_prepack = True
    vec_isa_ok = None
    descriptive_names = "original_aten"
    max_horizontal_fusion_size = 16
    fallback_scatter_reduce_sum = True
    enable_unsafe_math_opt_flag = False
    enable_floating_point_contract_flag = "off"
    enable_tiling_heuristics = True
    enable_grouped_gemm_template = False
    gemm_max_k_slices = 1
    gemm_cache_blocking = None
    gemm_thread_factors = None
    enable_loop_tail_vec = True
    enable_concat_linear = False


class aot_inductor:
    output_path = ""
    debug_compile = False
    compile_wrapper_with_O0 = False
    debug_intermediate_value_printer = "0"
    filtered_kernel_names = None
    serialized_in_spec = ""
    serialized_out_spec = ""
    use_runtime_constant_folding = False
    force_mmap_weights = False
    package = False
    package_cpp_only = False
    metadata = {}
    raise_error_on_ignored_optimization = True
    dump_aoti_minifier = False
    repro_level = 2
    presets = {}
    allow_stack_allocation = False
    use_minimal_arrayref_interface = False
    package_constants_in_so = True


class cuda:
    arch = None
    version = None
    compile_opt_level = "-O1"
    enable_cuda_lto = False
    enable_ptxas_info = False
    enable_debug_info = False
    use_fast_math = False
    cutlass_max_profiling_configs = None
    cuda_cxx = None
    cutlass_backend_min_gemm_size = 1
    generate_test_runner = False
    cutlass_op_allowlist_regex = None
    cutlass_op_denylist_regex = None


class trace:
    enabled = False
    save_real_tensors = False
    debug_dir = None
    debug_log = False
    info_log = False
    fx_graph = True
    fx_graph_transformed = True
    ir_pre_fusion = True
    ir_post_fusion = True
    output_code = True
    graph_diagram = False
    draw_orig_fx_graph = False
    dot_graph_shape = None
    log_url_for_graph_xform = None
    compile_profile = False
    upload_tar = None
    log_autotuning_results = False


install_config_module(sys.modules[__name__])
