package tools

// The tools' JSON Schemas, written by hand: the request is validated by
// delegate.Validate, which names each bad field, so the schema documents
// rather than enforces.
const deleguerSchema = `{
  "type": "object",
  "required": ["consigne"],
  "properties": {
    "consigne": {"type": "string", "description": "The instruction, in English."},
    "langue": {"type": "string", "description": "Output language, when not English."},
    "type": {"type": "string", "enum": ["code", "tests", "extraction", "resume", "traduction", "texte"], "default": "code"},
    "fichiers": {"type": "array", "items": {"type": "string"}, "description": "Project files joined as context; ranges allowed: path:10-40."},
    "modele": {"type": "string", "description": "A line range to imitate, e.g. tests/x.py:613-637."},
    "sortie": {"type": "string", "description": "Output path, written only once the answer is valide."},
    "format": {"type": "string", "enum": ["code", "json", "texte"]},
    "schema": {"type": "object", "description": "JSON Schema the answer must match when format is json."},
    "retour": {"type": "string", "enum": ["apercu", "complet"], "default": "apercu"},
    "moteur": {"type": "string", "enum": ["auto", "local", "api", "haiku"], "default": "auto"},
    "controle": {"type": "array", "items": {"type": "string", "enum": ["syntaxe", "complet", "symboles", "docstrings", "lint", "commande", "perimetre", "citations", "traduction"]}},
    "attendus": {"type": "array", "items": {"type": "string"}, "description": "Names the answer must define."},
    "n_tests": {"type": "integer", "minimum": 0},
    "commande": {"type": "string", "description": "Test command for the commande control."},
    "rouge_dabord": {"type": "boolean", "description": "The command must fail without the answer first."},
    "perimetre": {"type": "array", "items": {"type": "string"}},
    "essais": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
    "lot": {"type": "array", "items": {"type": "object"}, "description": "Several bouts, each with the fields above."}
  }
}`

const suivreSchema = `{
  "type": "object",
  "required": ["demande_id"],
  "properties": {
    "demande_id": {"type": "string"},
    "attente_s": {"type": "integer", "minimum": 0, "default": 45}
  }
}`

const idSchema = `{
  "type": "object",
  "required": ["demande_id"],
  "properties": {"demande_id": {"type": "string"}}
}`

const answerSchema = `{
  "type": "object",
  "properties": {
    "ok": {"type": ["boolean", "null"]},
    "demande_id": {"type": "string"},
    "etat": {"type": "string"},
    "fin": {"type": "string"},
    "verdict": {"type": "string"},
    "controles": {"type": "array"},
    "essais": {"type": "integer"},
    "moteur_final": {"type": "string"},
    "modele_final": {"type": "string"},
    "sortie": {"type": "string"},
    "diff": {"type": "object"},
    "corps": {"type": "string"},
    "erreur": {"type": "string"},
    "raison": {"type": "string"},
    "message": {"type": "string"},
    "reprise": {"type": "string"},
    "appel": {"type": "object"},
    "lot": {"type": "array"}
  }
}`
