"""What both model libraries need to run a transformer, in one home.

`anonymize` and `attacks` never import each other; they share these facts through this
package, which imports neither of them (nor Django) and loads torch only when asked:
`precision` (the precision choices and the bf16 check), `base_model` (the offline base
checkpoint), `batching` (length-grouped order for prediction batches) and `guess_scoring`
(the character cosine that scores a guessed name, human or machine).
"""
