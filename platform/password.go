package platform

// PasswordState says whether a login has a password that can approve.
type PasswordState string

// Password states of a login, as the system's own `passwd -S` reports them.
const (
	PasswordUsable  PasswordState = "usable"  // a password hash the system checks
	PasswordLocked  PasswordState = "locked"  // "!" or "*": no password opens it
	PasswordEmpty   PasswordState = "empty"   // no password at all: an empty answer would open it
	PasswordUnknown PasswordState = "unknown" // this system would not say, or cannot check it
)

// LoginPassword is what the system says about one login's password.
type LoginPassword struct {
	Account string
	State   PasswordState
	// Reason says, for the person, why a state other than usable was found.
	Reason string
}

// MaxPasswordBytes bounds a password typed for an approval: pam_unix's own
// bound (PAM_MAX_RESP_SIZE).
const MaxPasswordBytes = 512
