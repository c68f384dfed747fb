// Placeholder: replaced by the real implementation.
namespace tilejit {}
