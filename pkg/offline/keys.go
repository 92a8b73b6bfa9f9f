package offline

// The store keys of every answer kept for offline use start with one of
// these prefixes. This is the one list: the daemon seals the credentials
// among them at rest, snapshots leave them all out, prunes go through
// them, and `inspect` counts what each holds.
const (
	// TokenRequestPrefix starts the keys of the kubelet's stored
	// TokenRequest answers; the bound pod's UID follows it.
	TokenRequestPrefix = "tokenrequest/"
	// ReviewPrefix starts the keys of reviewed tokens (by hash).
	ReviewPrefix = "auth/token/"
	// DecisionPrefix starts the keys of authorization decisions; the
	// identity's hash follows it, so each identity's are counted apart.
	DecisionPrefix = "auth/decision/"
	// GetOnlyPrefix starts the keys of the node's answers to GETs of
	// kinds it may get but not list.
	GetOnlyPrefix = "getonly/"
)

// Kind is one kind of stored answer.
type Kind struct {
	// Name labels the kind in `inspect` and logs.
	Name string `json:"name"`
	// Prefix starts every key of the kind.
	Prefix string `json:"prefix"`
	// Credential: the values let whoever reads them act as someone, so
	// they are sealed with the state key.
	Credential bool `json:"credential"`
}

// Kinds are every kind of stored answer.
var Kinds = []Kind{
	{Name: "token-request-answers", Prefix: TokenRequestPrefix, Credential: true},
	{Name: "token-reviews", Prefix: ReviewPrefix, Credential: true},
	{Name: "decisions", Prefix: DecisionPrefix},
	{Name: "get-only-answers", Prefix: GetOnlyPrefix},
}

// SealedPrefixes are the prefixes of the kinds that are credentials.
func SealedPrefixes() []string {
	var out []string
	for _, k := range Kinds {
		if k.Credential {
			out = append(out, k.Prefix)
		}
	}
	return out
}

// Prefixes are the prefixes of every kind: a snapshot leaves them all
// out (answers are the node's own, and some are credentials).
func Prefixes() []string {
	out := make([]string, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, k.Prefix)
	}
	return out
}
