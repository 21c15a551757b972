package outbox

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms KafkaSecurity.Mechanism names.
const (
	SASLPlain     = "plain"
	SASLScram256  = "scram-sha-256"
	SASLScram512  = "scram-sha-512"
	saslMechanism = SASLPlain + ", " + SASLScram256 + " or " + SASLScram512
)

// ErrKafkaSecurity marks a Kafka TLS or SASL setting that cannot work.
var ErrKafkaSecurity = errors.New("outbox: kafka security")

// KafkaSecurity is how the producer and the tail reach the brokers. The
// zero value is plaintext without authentication.
type KafkaSecurity struct {
	TLS bool
	// CAFile is a PEM file of the certificates that sign the brokers'; ""
	// with TLS: the system's roots. The brokers' names are verified.
	CAFile string
	// Mechanism is "" (no SASL) or one of the SASL constants above.
	Mechanism string
	User      string
	Password  string // never logged
}

// Opts are the franz-go options for s: a TLS dialer and a SASL mechanism,
// each when asked for. The CA file is read now, so a bad one fails at start.
func (s KafkaSecurity) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.CAFile != "" {
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				return nil, fmt.Errorf("%w: CA file: %w", ErrKafkaSecurity, err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrKafkaSecurity, s.CAFile)
			}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.Mechanism == "" {
		return opts, nil
	}
	if s.User == "" || s.Password == "" {
		return nil, fmt.Errorf("%w: SASL %s needs a user and a password", ErrKafkaSecurity, s.Mechanism)
	}
	var m sasl.Mechanism
	switch s.Mechanism {
	case SASLPlain:
		m = plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()
	case SASLScram256:
		m = scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()
	case SASLScram512:
		m = scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()
	default:
		return nil, fmt.Errorf("%w: SASL mechanism %q: must be %s", ErrKafkaSecurity, s.Mechanism, saslMechanism)
	}
	return append(opts, kgo.SASL(m)), nil
}
