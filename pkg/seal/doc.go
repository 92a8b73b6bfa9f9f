// Package seal encrypts the daemon's sensitive state at rest with a key
// kept outside the data dir: AES-256-GCM from the standard library, a
// random nonce per value, and the row's key as associated data, so a
// sealed value moved to another row (or a value of another kind) fails
// to open.
//
// A sealed value is Magic, a one-byte key version, the nonce and the
// ciphertext with its tag. Magic starts with a zero byte, which no JSON
// or Kubernetes protobuf encoding does, so IsSealed tells a sealed value
// from a plaintext one written before a key was set.
//
// The key file holds exactly KeySize raw bytes (what Generate and
// `head -c 32 /dev/urandom` make); ReadKeyFile refuses anything else.
package seal
