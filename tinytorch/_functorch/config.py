"""``tinytorch._functorch.config``: the settings of PyTorch's AOTAutograd and partitioner
(``torch._functorch.config``), under PyTorch's names and defaults. Accepted, stored and
readable, and they have no effect: ``tinytorch.compile`` is a pass-through and tinytorch runs
eagerly (autograd records the graph as each op runs). See ``tinytorch._dynamo._config_module``
for how unknown names behave."""
import sys

from tinytorch._dynamo._config_module import install_config_module

functionalize_rng_ops = False
fake_tensor_allow_meta = True
debug_assert = False
debug_partitioner = False
decompose_custom_triton_ops = True
static_weight_shapes = True
cse = True
enable_autograd_cache = True
autograd_cache_allow_custom_autograd_functions = False
bundled_autograd_cache = False
enable_remote_autograd_cache = None
strict_autograd_cache = False
view_replay_for_aliased_outputs = True
max_dist_from_bw = 1000
ban_recompute_used_far_apart = True
ban_recompute_long_fusible_chains = True
ban_recompute_materialized_backward = True
ban_recompute_not_in_allowlist = True
ban_recompute_reductions = True
recompute_views = False
activation_memory_budget = 1.0
activation_memory_budget_runtime_estimator = "flops"
activation_memory_budget_solver = "dp"
visualize_memory_budget_pareto = False
memory_budget_pareto_dir = None
aggressive_recomputation = False
fake_tensor_allow_unsafe_data_ptr_access = True
unlift_effect_tokens = False
fake_tensor_crossref = False
fake_tensor_propagate_real_tensors = False
donated_buffer = True
torch_compile_graph_format = "svg"
generate_fake_kernels_from_real_mismatches = False
graphsafe_rng_functionalization = True
unsafe_allow_optimization_of_collectives = False
treat_parameters_as_free_to_save = True
joint_custom_pass = None

install_config_module(sys.modules[__name__])
