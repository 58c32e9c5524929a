#!/usr/bin/env bash
# GRPO on npgym with verl on one GPU node (set GPUS to the node's GPU count).
#   bash examples/verl/prepare_data.sh ~/data/npgym 1000
#   bash examples/verl/run_grpo.sh ~/data/npgym Qwen/Qwen2.5-3B-Instruct
# Multi-turn repair (the model checks answers with the submit_solution tool):
#   bash examples/verl/prepare_data.sh ~/data/npgym 1000 --multi-turn
#   MULTI_TURN=1 bash examples/verl/run_grpo.sh ~/data/npgym Qwen/Qwen2.5-3B-Instruct
# The reward is npgym's "strict" preset (reward_kwargs below, and the tool config for repair).
# CPU smoke check (verl's rollout needs a GPU): the overrides against verl's config, and the
# configured reward on the rows of `prepare_data.sh --smoke`:
#   bash examples/verl/run_grpo.sh --smoke /tmp/npgym-smoke
set -euo pipefail
smoke=0
if [ "${1:-}" = --smoke ]; then
  smoke=1
  shift
fi
data=${1:-$HOME/data/npgym}
model=${2:-Qwen/Qwen2.5-3B-Instruct}
gpus=${GPUS:-1}
here=$(cd "$(dirname "$0")" && pwd)
reward_file=$(python3 -c "import npgym.integrations.verl as m; print(m.__file__)")

multi_turn=()
if [ "${MULTI_TURN:-0}" = 1 ]; then
  multi_turn=(
    actor_rollout_ref.rollout.multi_turn.enable=true
    actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4
    actor_rollout_ref.rollout.multi_turn.tool_config_path="$here/tool_config.yaml"
  )
fi

overrides=(
  algorithm.adv_estimator=grpo
  data.train_files="$data/train.parquet"
  data.val_files="$data/test.parquet"
  data.train_batch_size=64
  data.max_prompt_length=8192
  data.max_response_length=4096
  data.filter_overlong_prompts=true
  data.truncation=error
  actor_rollout_ref.model.path="$model"
  actor_rollout_ref.model.use_remove_padding=true
  actor_rollout_ref.model.enable_gradient_checkpointing=true
  actor_rollout_ref.actor.optim.lr=1e-6
  actor_rollout_ref.actor.ppo_mini_batch_size=16
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
  actor_rollout_ref.actor.use_kl_loss=true
  actor_rollout_ref.actor.kl_loss_coef=0.001
  actor_rollout_ref.actor.entropy_coeff=0
  actor_rollout_ref.rollout.name=vllm
  actor_rollout_ref.rollout.n=8
  actor_rollout_ref.rollout.tensor_model_parallel_size=1
  actor_rollout_ref.rollout.gpu_memory_utilization=0.6
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
  reward.custom_reward_function.path="$reward_file"
  reward.custom_reward_function.name=compute_score
  +reward.custom_reward_function.reward_kwargs.reward=strict
  trainer.project_name=npgym
  trainer.experiment_name="grpo-$(basename "$model")"
  trainer.logger=console
  trainer.n_gpus_per_node="$gpus"
  trainer.nnodes=1
  trainer.save_freq=50
  trainer.test_freq=25
  trainer.total_epochs=1
)
if [ "$smoke" = 1 ]; then
  exec python3 "$here/smoke.py" "$data" "${overrides[@]}" "${multi_turn[@]}" "${@:3}"
fi
python3 -m verl.trainer.main_ppo "${overrides[@]}" "${multi_turn[@]}" "${@:3}"
