"""``tinytorch._dynamo.config``: the settings of PyTorch's graph capture (TorchDynamo), under
PyTorch's names and defaults. Accepted, stored and readable, and they have no effect:
``tinytorch.compile`` is a pass-through and tinytorch runs eagerly. See
``tinytorch._dynamo._config_module`` for how unknown names behave."""
import sys

from tinytorch._dynamo._config_module import install_config_module

verbose = False
verify_correctness = False
minimum_call_count = 1
dead_code_elimination = True
recompile_limit = 8
cache_size_limit = 8                     # PyTorch's older name of recompile_limit
accumulated_recompile_limit = 256
accumulated_cache_size_limit = 256
skip_code_recursive_on_recompile_limit_hit = True
fail_on_recompile_limit_hit = False
error_on_recompile = False
specialize_int = False
specialize_float = False
dynamic_shapes = True
use_lazy_graph_module = True
assume_static_by_default = True
automatic_dynamic_shapes = True
automatic_dynamic_shapes_mark_as = "dynamic"
force_parameter_static_shapes = True
force_nn_module_property_static_shapes = True
allow_ignore_mark_dynamic = False
allow_unspec_int_on_nn_module = False
guard_nn_modules = False
guard_nn_modules_using_dict_tags = True
inline_inbuilt_nn_modules = True
install_free_tensors = False
traceable_tensor_subclasses = set()
nontraceable_tensor_subclasses = set()
suppress_errors = False
replay_record_enabled = False
rewrite_assert_with_torch_assert = True
disable = False
cprofile = False
log_file_name = None
repro_after = None
repro_level = 2
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
capture_autograd_function = True
capture_sparse_compute = False
prefer_deferred_runtime_asserts_over_guards = False
allow_complex_guards_as_runtime_asserts = False
do_not_emit_runtime_asserts = False
optimize_ddp = True
optimize_ddp_lazy_compile = False
skip_fsdp_guards = True
skip_fsdp_hooks = True
skip_nnmodule_hook_guards = True
skip_no_tensor_aliasing_guards_on_parameters = True
skip_tensor_guards_with_matching_dict_tags = True
raise_on_ctx_manager_usage = True
raise_on_unsafe_aot_autograd = False
error_on_nested_jit_trace = True
error_on_nested_fx_trace = True
allow_rnn = False
allow_empty_graphs = False
graph_break_on_nn_param_ctor = True
enable_trace_contextlib = True
enable_cpp_guard_manager = True
enable_cpp_framelocals_guard_eval = True
enable_compiler_collectives = False
automatic_dynamic_local_pgo = True
automatic_dynamic_remote_pgo = None
compiled_autograd = False
compiled_autograd_kwargs_override = {}
trace_numpy = True
numpy_default_float = "float64"
numpy_default_complex = "complex128"
numpy_default_int = "int64"
use_numpy_random_stream = False
only_allow_pt2_compliant_ops = False
report_guard_failures = True
log_compilation_metrics = True
record_compile_time_instruction_count = False
reorderable_logging_functions = set()
ignore_logger_methods = set()
use_graph_deduplication = False
wrap_top_frame = False
caching_precompile = False
cudagraph_backend_keep_input_mutation = False
cudagraph_backend_support_input_mutation = False
debug_dir_root = "torch_compile_debug"

install_config_module(sys.modules[__name__])
