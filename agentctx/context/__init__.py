"""What Claude sees: the per-prompt judgement and its evidence model, prompt kinds, the
SessionStart digest, the project profile and how injected text is fenced. Lean: the hooks
import it, so it imports only the core and the store."""
